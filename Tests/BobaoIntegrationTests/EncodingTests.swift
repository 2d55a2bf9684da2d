import BobaoCore
import BobaoServer
import BobaoTestSupport
import Foundation
import Testing

extension SoundSuites {
    /// `bobao serve --encoding gbk`: lines from older Chinese Windows software, converted before anything
    /// else reads them.
    @Suite(.serialized, .timeLimit(.minutes(2)))
    struct EncodingTests {
        /// "新客户来了" in GBK, as a POS program sends it.
        static let newCustomer: [UInt8] = [0xD0, 0xC2, 0xBF, 0xCD, 0xBB, 0xA7, 0xC0, 0xB4, 0xC1, 0xCB]
        /// "单号7" in GBK.
        static let orderSeven: [UInt8] = [0xB5, 0xA5, 0xBA, 0xC5, 0x37]

        @Test func gbkLinesAreAcceptedSpokenAndLoggedAsTheirChineseText() throws {
            let sound = try TestSoundServer.shared()
            let recorder = try MonitorRecorder(address: sound.address, sinkName: sound.sinkName)
            let bobao = try ServerProcess(arguments: ["--no-spool", "--encoding", "gbk"], pulseServer: sound.address)
            #expect(bobao.waitForLog("keep-alive stream open"))
            let text = "新客户来了", expected = try Rendering(text).soundingDuration
            let newline = [UInt8(ascii: "\n")]

            // A plain line in GBK.
            var start = recorder.samples.count
            let client = try EventClient(port: bobao.port)
            try client.send(Self.newCustomer + newline)
            #expect(client.waitForLines(1).first?.text == "OK 1")
            #expect(bobao.waitForLog("spoke #1"))
            #expect(recorder.waitForQuiet(after: start))
            var heard = recorder.analysis(from: start).segments()
            #expect(heard.count == 1 && abs((heard.first?.duration ?? 0) - expected) < 0.1 * expected,
                    "\(heard) against \(expected) s")
            #expect(bobao.log.contains(": \"新客户来了\"\n"), "\(bobao.log)")
            #expect(bobao.log.contains("speaking #1 \"新客户来了\"\n"))

            // Bytes that are not GBK: 0xFF never starts a character, and a lead byte cannot end a line. The
            // connection stays usable.
            try client.send([0xFF, 0xFE, 0x41] + newline + [0xD0] + newline)
            #expect(client.waitForLines(3).dropFirst().map(\.text)
                    == ["ERR bad-encoding line is not valid GBK", "ERR bad-encoding line is not valid GBK"])

            // A JSON line in GBK, with a Chinese id: the events name it in escaped ASCII.
            start = recorder.samples.count
            let json = Array(#"{"text": ""#.utf8) + Self.newCustomer + Array(#"", "id": ""#.utf8) + Self.orderSeven
                + Array(#"", "wait": true}"#.utf8) + newline
            try client.send(json)
            client.finishSending()
            #expect(client.waitForEvent("done", number: 2) != nil, "\(client.lines)")
            #expect(client.waitForEnd())
            let replies = client.lines.dropFirst(3).map(\.text)
            #expect(replies == [
                "OK 2",
                #"{"event":"start","number":2,"id":"\u5355\u53f77"}"#,
                #"{"event":"done","number":2,"id":"\u5355\u53f77"}"#,
            ], "\(replies)")
            #expect(recorder.waitForQuiet(after: start))
            heard = recorder.analysis(from: start).segments()
            #expect(heard.count == 1 && abs((heard.first?.duration ?? 0) - expected) < 0.1 * expected,
                    "\(heard) against \(expected) s")

            // A GBK command whose id is not there: refused in ASCII, the id escaped.
            let cancel = Array(#"{"cmd": "cancel", "id": ""#.utf8) + Self.orderSeven + Array("9\"}\n".utf8)
            let commander = try EventClient(port: bobao.port)
            try commander.send(cancel)
            commander.finishSending()
            #expect(commander.waitForLines(1).first?.text == #"ERR not-found nothing waiting or speaking has id "\u5355\u53f779""#)

            #expect(bobao.stop() == 0)
            let log = bobao.log
            #expect(log.contains("accepted #2 from 127.0.0.1:"))
            #expect(log.contains(": \"新客户来了\" (id \"单号7\")\n"), "\(log)")
            #expect(log.contains("bad-encoding (line is not valid GBK)"))
            #expect(!log.contains("accepted #3"))
        }
    }
}
