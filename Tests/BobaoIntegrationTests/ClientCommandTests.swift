import BobaoTestSupport
import Foundation
import Testing

/// `bobao say` with options and `--wait`/`--json`, and `status`, `cancel`, `skip`, `clear`, against a
/// `ScriptedPeer` that answers with the protocol's texts: what the client sends, prints and exits with.
@Suite(.timeLimit(.minutes(1)))
struct ClientCommandTests {
    /// Runs `bobao ARGUMENTS --to PEER` against a peer that answers `reply`; returns the result and what was sent.
    func run(_ arguments: [String], reply: String, input: Data? = nil) throws -> (result: ProgramResult, sent: String) {
        let peer = try ScriptedPeer(reply: reply)
        let result = try BobaoBinary.run(arguments + ["--to", peer.address], input: input)
        return (result, peer.receivedText)
    }

    // MARK: say

    @Test func withoutOptionsTextGoesAsAPlainLine() throws {
        let (result, sent) = try run(["say", "新客户", "来了"], reply: "OK 1\n")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(sent == "新客户 来了\n")
        #expect(result.stdoutText == "OK 1\n")
    }

    @Test func everyOptionGoesIntoOneEscapedJSONLine() throws {
        let (result, sent) = try run(
            ["say", "--priority", "urgent", "--repeat", "2", "--chime", "ding", "--voice", "zh", "--rate", "200",
             "--pitch", "40", "--volume", "80", "--id", "order \"7\"", "--ttl", "30", "--max-speech", "2",
             "新\"客\\户\t😀"],
            reply: "OK 12\n")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(sent == #"{"text":"\u65b0\"\u5ba2\\\u6237\t\ud83d\ude00","priority":"urgent","repeat":2,"chime":"ding","#
            + #""voice":"zh","rate":200,"pitch":40,"volume":80,"id":"order \"7\"","ttl":30,"max_speech":2}"# + "\n")
    }

    @Test(arguments: [
        (["--chime", "on"], #"{"text":"hi","chime":true}"#),
        (["--chime", "off"], #"{"text":"hi","chime":false}"#),
        (["--no-chime"], #"{"text":"hi","chime":false}"#),
        (["--priority", "normal", "--repeat", "1"], #"{"text":"hi"}"#),
        (["--json"], #"{"text":"hi"}"#),
        (["--wait"], #"{"text":"hi","wait":true}"#),
    ])
    func defaultsAreLeftOutAndChimesAreBooleansOrNames(options: [String], line: String) throws {
        let (_, sent) = try run(["say"] + options + ["hi"], reply: "OK 1\n")
        #expect(sent == line + "\n")
    }

    @Test func plainTextThatWouldReadAsJSONOrAuthIsSentAsJSON() throws {
        let (result, sent) = try run(["say"], reply: "OK 1\nOK 2\nOK 3\n", input: Data("{好}\nAUTH 是我\n好\n".utf8))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(sent == #"{"text":"{\u597d}"}"# + "\n" + #"{"text":"AUTH \u662f\u6211"}"# + "\n好\n")
    }

    @Test func waitPrintsEachOutcomeAndExitsZeroWhenAllAreDone() throws {
        let events = """
            OK 12
            OK 13
            {"event":"start","number":12,"id":null}
            {"event":"interrupted","number":12,"id":null}
            {"event":"start","number":13,"id":null}
            {"event":"done","number":13,"id":null}
            {"event":"start","number":12,"id":null}
            {"event":"done","number":12,"id":null}

            """
        let (result, sent) = try run(["say", "--wait"], reply: events, input: Data("一号\n二号\n".utf8))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(sent == #"{"text":"\u4e00\u53f7","wait":true}"# + "\n" + #"{"text":"\u4e8c\u53f7","wait":true}"# + "\n")
        #expect(result.stdoutText == """
            OK 12
            OK 13
            #12 interrupted by an urgent announcement; it will be said again from its start
            #13 done
            #12 done

            """)
    }

    @Test func waitExitsOneUnlessEveryAnnouncementEndedDone() throws {
        let events = """
            OK 12
            ERR queue-full 1 announcement is already waiting; try again later
            OK 14
            OK 9 duplicate
            OK 15
            {"event":"failed","number":12,"id":null,"reason":"no sound server (\\u58f0)"}
            {"event":"done","number":15,"id":null}

            """
        let (result, _) = try run(["say", "--wait"], reply: events, input: Data("a\nb\nc\nd\ne\n".utf8))
        #expect(result.status == 1)
        #expect(result.stdoutText.contains("#12 failed: no sound server (声)\n"))
        #expect(result.stdoutText.contains("#15 done\n"))
        #expect(result.stdoutText.contains("#14 no outcome: the connection closed before it ended\n"))
        #expect(result.stdoutText.contains("#9 duplicate: the server no longer knows how the first one ended"))
        #expect(result.stderr.contains("1 of 5 line(s) refused"), "\(result.stderr)")
        #expect(result.stderr.contains("3 of 4 accepted announcement(s) did not end done"), "\(result.stderr)")
    }

    @Test func aDuplicateGetsTheOriginalsOutcome() throws {
        let events = """
            OK 9 duplicate
            {"event":"cancelled","number":9,"id":"k","reason":"cancelled by a client"}

            """
        let (result, _) = try run(["say", "--wait", "--id", "k", "好"], reply: events)
        #expect(result.status == 1)
        #expect(result.stdoutText == "OK 9 duplicate\n#9 cancelled: cancelled by a client\n")
    }

    @Test func jsonWrapsRepliesAndPassesEventsThrough() throws {
        let events = """
            OK authenticated
            OK 12
            OK 12 duplicate
            ERR bad-field rate must be 80 to 450
            {"event":"start","number":12,"id":"k"}
            {"event":"done","number":12,"id":"k"}
            {"event":"done","number":12,"id":"k"}

            """
        let (result, sent) = try run(["say", "--json", "--wait", "--token", "t"], reply: events, input: Data("a\nb\nc\n".utf8))
        #expect(sent.hasPrefix("AUTH t\n"))
        #expect(result.status == 1, "one line was refused")
        #expect(result.stdoutText == """
            {"ok":true,"number":12}
            {"ok":true,"number":12,"duplicate":true}
            {"ok":false,"code":"bad-field","reason":"rate must be 80 to 450"}
            {"event":"start","number":12,"id":"k"}
            {"event":"done","number":12,"id":"k"}
            {"event":"done","number":12,"id":"k"}

            """)
    }

    @Test func aRefusedTokenMeansNothingWasSpoken() throws {
        let (result, _) = try run(["say", "--token", "wrong", "好"], reply: "ERR auth-failed wrong token\n")
        #expect(result.status == 1)
        #expect(result.stderr.contains("did not let this client in (ERR auth-failed wrong token); nothing was spoken"))
    }

    @Test func aTokenTheServerDoesNotNeedIsOnlyANote() throws {
        let (result, _) = try run(["say", "--token", "t", "好"], reply: "ERR auth-unexpected this server takes no token\nOK 4\n")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("takes no token"))
    }

    // MARK: status, cancel, skip, clear, volume

    static let status = #"{"version":"0.9.0","uptime_s":7384,"sound":{"state":"playing","sink":"auto_null","last_error":null},"#
        + #""queue":{"urgent":1,"normal":3,"low":0,"storing":0,"total":4,"capacity":256},"#
        + #""speaking":{"number":12,"id":"order-7","priority":"urgent","text":"\u65b0\u5ba2\u6237"},"#
        + #""counters":{"accepted":30,"duplicate":2,"refused":1,"done":25,"cut":0,"expired":1,"cancelled":2,"failed":0,"interrupted":1},"#
        + #""last_error":{"message":"no sound server","at_ms":1796076636000}}"#

    @Test func statusPrintsASummary() throws {
        let (result, sent) = try run(["status", "--token", "t"], reply: "OK authenticated\n" + Self.status + "\n")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(sent == "AUTH t\n{\"cmd\":\"status\"}\n")
        #expect(result.stdoutText == """
            Bobao 0.9.0, up 2 h 3 min
            sound:      playing on auto_null
            queue:      1 urgent, 3 normal, 0 low waiting (4 of 256; 0 being stored)
            speaking:   #12, urgent, id "order-7": "新客户"
            counters:   30 accepted, 2 duplicate, 1 refused, 25 done, 0 cut, 1 expired, 2 cancelled, 0 failed, 1 interrupted
            last error: no sound server (2026-11-30T22:10:36.000Z)

            """)
    }

    @Test func statusWithJSONPrintsTheLineAsItCame() throws {
        let (result, _) = try run(["status", "--json"], reply: Self.status + "\n")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdoutText == Self.status + "\n")
    }

    @Test(arguments: [
        (["cancel", "order-7"], #"{"cmd":"cancel","id":"order-7"}"#, "OK cancelled #12"),
        (["cancel", "12"], #"{"cmd":"cancel","id":"12"}"#, "OK cancelled #12"),
        (["cancel", "--all"], #"{"cmd":"cancel","all":true}"#, "OK cancelled 3"),
        (["skip"], #"{"cmd":"skip"}"#, "OK nothing is speaking"),
        (["clear"], #"{"cmd":"clear"}"#, "OK cleared 0"),
        (["volume", "70"], #"{"cmd":"volume","value":70}"#, "OK volume set to 70"),
        (["volume", "0%"], #"{"cmd":"volume","value":0}"#, "OK volume set to 0 (in memory only: --no-spool)"),
        (["volume"], #"{"cmd":"volume"}"#, "OK volume 70"),
    ])
    func commandsSendOneJSONLineAndPrintTheReply(arguments: [String], line: String, reply: String) throws {
        let (result, sent) = try run(arguments, reply: reply + "\n")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(sent == line + "\n")
        #expect(result.stdoutText == reply + "\n")
    }

    @Test func statusShowsTheStreamVolumeWhenTheServerReportsIt() throws {
        for (volume, line) in [("70", "volume:     70 % (set by bobao volume)"), ("null", "volume:     not set (the sound server's own)")] {
            let status = Self.status.replacingOccurrences(
                of: #""last_error":null},"#, with: #""last_error":null,"volume":\#(volume)},"#)
            let (result, _) = try run(["status"], reply: status + "\n")
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdoutText.contains("sound:      playing on auto_null\n\(line)\nqueue:"), "\(result.stdoutText)")
        }
    }

    @Test(arguments: [["volume", "101"], ["volume", "-1"], ["volume", "loud"], ["volume", "70.5"], ["volume", "70", "80"]])
    func aBadVolumeIsAUsageErrorFoundBeforeConnecting(arguments: [String]) throws {
        // Nothing listens on the discard port: a client that connected would exit 1, not 2.
        let result = try BobaoBinary.run(arguments + ["--to", "127.0.0.1:9"])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("PERCENT") || result.stderr.contains("unknown option -1"), "\(result.stderr)")
    }

    @Test func aRefusedVolumeExitsOne() throws {
        let (result, _) = try run(["volume", "70"], reply: "ERR spool-failed the volume was not changed: the spool was deleted\n")
        #expect(result.status == 1)
        #expect(result.stdoutText == "ERR spool-failed the volume was not changed: the spool was deleted\n")
    }

    @Test func aRefusedCommandExitsOne() throws {
        let (result, _) = try run(["cancel", "新"], reply: #"ERR not-found no waiting or speaking announcement has the id "\u65b0""# + "\n")
        #expect(result.status == 1)
        #expect(result.stdoutText.hasPrefix("ERR not-found"))
    }

    @Test func noReplyExitsOne() throws {
        let (result, _) = try run(["skip"], reply: "")
        #expect(result.status == 1)
        #expect(result.stderr.contains("closed the connection without replying"), "\(result.stderr)")
    }
}
