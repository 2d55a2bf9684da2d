import BobaoCore
import BobaoServer
import BobaoTestSupport
import Foundation
import Testing

extension SoundSuites {
    /// The JSON side of the line protocol over a real socket: every refusal, the commands' answers, and
    /// `status`. One server with a token; nothing is recorded.
    @Suite(.serialized, .timeLimit(.minutes(2)))
    struct ProtocolErrorTests {
        static let token = "pr0tocol-Token"

        /// Authenticates, sends `lines`, ends the sending side, and returns the replies after `OK authenticated`.
        static func exchange(_ lines: [String], with bobao: ServerProcess) throws -> [String] {
            let replies = try bobao.exchange((["AUTH \(token)"] + lines).joined(separator: "\n") + "\n")
            #expect(replies.first == "OK authenticated")
            return Array(replies.dropFirst())
        }

        static func object(_ line: String) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        }

        @Test func refusalsCommandsAndStatusOverASocket() throws {
            let sound = try TestSoundServer.shared()
            let bobao = try ServerProcess(arguments: ["--no-spool", "--token", Self.token], pulseServer: sound.address)
            #expect(bobao.waitForLog("keep-alive stream open"))

            // Before AUTH, a JSON command or announcement is refused like any line, and the connection closed.
            for line in [#"{"cmd": "status"}"#, #"{"cmd": "skip"}"#, #"{"text": "好", "priority": "urgent"}"#] {
                #expect(try bobao.exchange(line + "\n" + #"{"cmd": "clear"}"# + "\n")
                        == ["ERR auth-required send AUTH <token> as the first line"])
            }

            // Each refusal on one connection, which stays usable: the last line is still answered.
            let refusals: [(line: String, reply: String)] = [
                (#"{"text": "a""#, "ERR bad-json not valid JSON: the line ends before the object does"),
                (#"{"text": x}"#, #"ERR bad-json not valid JSON at character 10 (near "x}")"#),
                (#"{"text": "a"} trailing"#, #"ERR bad-json not valid JSON at character 15 (near "trailing")"#),
                // Unknown fields.
                (#"{"text": "a", "bogus": 1}"#, "ERR bad-field bogus unknown field (known: text, priority, repeat, "
                    + "chime, voice, rate, pitch, volume, id, ttl, max_speech, wait, cmd, all, value)"),
                (#"{"text": "a", "all": true}"#, #"ERR bad-field all goes only with "cmd": "cancel""#),
                (#"{"cmd": "status", "text": "a"}"#, #"ERR bad-field text does not go with "cmd""#),
                // Out of range.
                (#"{"text": "a", "repeat": 6}"#, "ERR bad-field repeat must be a whole number from 1 to 5"),
                (#"{"text": "a", "repeat": 0}"#, "ERR bad-field repeat must be a whole number from 1 to 5"),
                (#"{"text": "a", "volume": 101}"#, "ERR bad-field volume must be a whole number from 0 to 100"),
                (#"{"text": "a", "rate": 79}"#, "ERR bad-field rate must be a whole number from 80 to 450"),
                (#"{"text": "a", "pitch": 100}"#, "ERR bad-field pitch must be a whole number from 0 to 99"),
                (#"{"text": "a", "ttl": 0}"#, "ERR bad-field ttl must be a number of seconds from 0.001 to 2592000"),
                (#"{"text": "a", "max_speech": 3601}"#,
                 "ERR bad-field max_speech must be a number of seconds from 0.1 to 3600"),
                (#"{"text": "a", "chime": "nosuch"}"#, #"ERR bad-field chime no chime named "nosuch" (have: ding)"#),
                // Wrong types.
                (#"{"text": 1}"#, "ERR bad-field text must be a string"),
                (#"{"text": "a", "repeat": "2"}"#, "ERR bad-field repeat must be a whole number from 1 to 5"),
                (#"{"text": "a", "repeat": 1.5}"#, "ERR bad-field repeat must be a whole number from 1 to 5"),
                (#"{"text": "a", "priority": "high"}"#, #"ERR bad-field priority must be "urgent", "normal" or "low""#),
                (#"{"text": "a", "wait": "yes"}"#, "ERR bad-field wait must be true or false"),
                (#"{"text": "a", "chime": 1}"#, "ERR bad-field chime must be true, false or a chime's name"),
                (#"{"text": "a", "id": 1.5}"#, "ERR bad-field id must be a string of 1 to 128 bytes or a whole number"),
                (#"{"cmd": 1}"#, "ERR bad-field cmd must be a string: cancel, skip, clear, status or volume"),
                // Missing, empty, twice, or not together.
                (#"{}"#, "ERR bad-field text missing"),
                (#"{"text": " "}"#, "ERR bad-field text empty"),
                (#"{"text": "a\u0001"}"#, "ERR bad-field text holds control characters"),
                (#"{"text": "a", "text": "b"}"#, "ERR bad-field text given twice"),
                (#"{"cmd": "dance"}"#, #"ERR bad-field cmd unknown command "dance" (cancel, skip, clear, status, volume)"#),
                (#"{"cmd": "skip", "id": "x"}"#, #"ERR bad-field id goes only with "cmd": "cancel""#),
                (#"{"cmd": "cancel"}"#, #"ERR bad-field id missing (or "all": true)"#),
                (#"{"cmd": "cancel", "id": "x", "all": true}"#, "ERR bad-field all cannot go with id"),
                // A command whose target is not there.
                (#"{"cmd": "cancel", "id": "nope"}"#, #"ERR not-found nothing waiting or speaking has id "nope""#),
                (#"{"cmd": "cancel", "id": "42"}"#, #"ERR not-found nothing waiting or speaking has id "42""#),
            ]
            let replies = try Self.exchange(refusals.map(\.line) + [#"{"cmd": "skip"}"#], with: bobao)
            #expect(replies.count == refusals.count + 1, "\(replies)")
            for (sent, reply) in zip(refusals, replies) {
                #expect(reply == sent.reply, "for \(sent.line)")
            }
            #expect(replies.last == "OK nothing is speaking")
            #expect(!bobao.log.contains("accepted #"), "nothing refused was accepted")

            // status while #1 speaks, #2 (normal) and #3 (low) wait.
            let long = "请保管好您的随身物品，祝您生活愉快，欢迎下次光临"
            let speaking = try EventClient(port: bobao.port)
            try speaking.send("AUTH \(Self.token)\n" + #"{"text": "\#(long)", "id": "long", "wait": true}"# + "\n")
            speaking.finishSending()
            #expect(speaking.waitForEvent("start", number: 1) != nil, "\(speaking.lines)")
            let low = try EventClient(port: bobao.port)
            try low.send("AUTH \(Self.token)\n" + #"{"text": "\#(long)", "wait": true}"# + "\n"
                + #"{"text": "三号", "priority": "low", "wait": true}"# + "\n")
            low.finishSending()
            #expect(low.waitForLines(3).map(\.text) == ["OK authenticated", "OK 2", "OK 3"])
            // (A field given as null is left out: this is a plain skip.)
            let statusLines = try Self.exchange([#"{"cmd": "status"}"#, #"{"cmd": "skip", "all": null}"#], with: bobao)
            #expect(statusLines.count == 2, "status is one line: \(statusLines)")
            let status = try Self.object(try #require(statusLines.first))
            #expect(status["version"] as? String == BobaoVersion.current)
            let uptime = try #require(status["uptime_s"] as? Int)
            #expect(uptime >= 0 && uptime < 120)
            let soundState = try #require(status["sound"] as? [String: Any])
            #expect(soundState["state"] as? String == "playing", "\(soundState)")
            #expect(soundState["sink"] as? String == sound.sinkName)
            #expect(soundState["last_error"] is NSNull)
            let queue = try #require(status["queue"] as? [String: Int])
            #expect(queue == ["urgent": 0, "normal": 1, "low": 1, "storing": 0, "total": 2, "capacity": 256], "\(queue)")
            let speakingNow = try #require(status["speaking"] as? [String: Any])
            #expect(speakingNow["number"] as? Int == 1 && speakingNow["id"] as? String == "long"
                    && speakingNow["priority"] as? String == "normal" && speakingNow["text"] as? String == long,
                    "\(speakingNow)")
            let counters = try #require(status["counters"] as? [String: Int])
            #expect(counters == ["accepted": 3, "duplicate": 0, "refused": 0, "done": 0, "cut": 0, "expired": 0,
                                 "cancelled": 0, "failed": 0, "interrupted": 0], "\(counters)")
            #expect(status["last_error"] is NSNull)
            // The skip that followed status on its connection stopped #1.
            #expect(statusLines.last == "OK skipped #1")
            #expect(speaking.waitForEvent("cancelled", number: 1) != nil)

            // A newer normal announcement drops the low one that waits.
            #expect(low.waitForEvent("start", number: 2) != nil)
            #expect(try Self.exchange([#"{"text": "四号"}"#], with: bobao) == ["OK 4"])
            let dropped = low.waitForEvent("cancelled", number: 3)
            #expect((dropped?.object?["reason"] as? String)?.hasPrefix("superseded") == true, "\(low.lines)")
            // Messages without a client id are cancelled by number (a JSON number or a string of digits),
            // waiting (#4) or speaking (#2).
            #expect(try Self.exchange([#"{"cmd": "cancel", "id": 4}"#, #"{"cmd": "cancel", "id": "2"}"#, #"{"cmd": "clear"}"#],
                                      with: bobao) == ["OK cancelled #4", "OK cancelled #2", "OK cleared 0"])
            #expect(low.waitForEnd())
            #expect(low.events(of: 2) == ["start", "cancelled"] && low.events(of: 3) == ["cancelled"], "\(low.lines)")
            let after = try Self.object(try #require(try Self.exchange([#"{"cmd": "status"}"#], with: bobao).first))
            #expect(after["queue"] as? [String: Int]
                    == ["urgent": 0, "normal": 0, "low": 0, "storing": 0, "total": 0, "capacity": 256], "\(after)")
            #expect(bobao.stop() == 0)
            #expect(!bobao.log.contains("speaking #3 "), "the dropped low one was never spoken")
            #expect(!bobao.log.contains("speaking #4 "), "the cancelled one was never spoken")
        }
    }
}
