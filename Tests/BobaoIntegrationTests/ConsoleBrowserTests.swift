import BobaoTestSupport
import Foundation
import Testing

/// Where the browser test finds its tools: Debian's `chromium`, and `python3-websockets` for the system
/// python3 that scripts/console-check.py runs with (scripts/install-deps.sh installs both).
enum ConsoleBrowser {
    static let python = "/usr/bin/python3"
    static var chromium: String? { findProgram(ProcessInfo.processInfo.environment["CHROMIUM"] ?? "chromium") }
    static var hasWebsockets: Bool {
        (try? runProgram(python, ["-c", "import websockets"]).status) == 0
    }
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
}

extension SoundSuites {
    /// The web console (`GET /`) in a real headless Chromium, driven through the DevTools protocol by
    /// scripts/console-check.py against a real `bobao serve --http` on the suite's PulseAudio: a Chinese
    /// sentence typed into the form and sent is heard on the null sink, and the page's list shows it `done`
    /// (which it learns only from `/events`), with no console error or exception on the way.
    @Suite(.serialized, .timeLimit(.minutes(3)))
    struct ConsoleBrowserTests {
        let sound: TestSoundServer.Connection

        init() throws {
            sound = try TestSoundServer.shared()
        }

        /// The JSON object the driver prints.
        struct Summary: Decodable {
            struct Row: Decodable {
                var text: String?
                var badge: String?
                var onset: String?
            }

            var ok: Bool
            var errors: [String]
            var number: Int?
            var state: String?
            var row: Row?
            var connection: String?
            var skip: String?
            var volume: String?
            var screenshots: [String]
            var failure: String?
            var phoneOverflow: Bool?

            enum CodingKeys: String, CodingKey {
                case ok, errors, number, state, row, connection, skip, volume, screenshots, failure
                case phoneOverflow = "phone_overflow"
            }
        }

        @Test func aChineseSentenceSentFromTheConsoleIsHeardAndListedDone() throws {
            try #require(ConsoleBrowser.chromium != nil, "no chromium on PATH: scripts/install-deps.sh installs it")
            try #require(ConsoleBrowser.hasWebsockets, "no websockets module for \(ConsoleBrowser.python): python3-websockets")
            // No digits or Latin letters: the server would speak them as normalized words, and the recording is
            // measured against a render of the sentence itself.
            let sentence = "请王先生到三号窗口办理业务"
            let token = UUID().uuidString
            let recorder = try MonitorRecorder(address: sound.address, sinkName: sound.sinkName)
            // A token, so every request the page makes (/events among them) must carry the header.
            let server = try ServerProcess(
                arguments: ["--http", "127.0.0.1:0", "--token", token, "--no-spool"], pulseServer: sound.address)
            #expect(server.waitForLog("keep-alive stream open"))
            let url = "http://\(try #require(server.httpAddress, "no http line from serve"))/"

            let artifacts = ConsoleBrowser.repository.appendingPathComponent(".build/test-artifacts")
            let screenshot = artifacts.appendingPathComponent("console.png").path
            let phoneScreenshot = artifacts.appendingPathComponent("console-phone.png").path
            let run = try runProgram(ConsoleBrowser.python, [
                ConsoleBrowser.repository.appendingPathComponent("scripts/console-check.py").path, url,
                "--screenshot", screenshot, "--phone-screenshot", phoneScreenshot, "--text", sentence,
                "--token", token, "--timeout", "40",
            ])
            print("ConsoleBrowserTests: screenshots \(screenshot) and \(phoneScreenshot)")
            let summary = try JSONDecoder().decode(Summary.self, from: run.stdout)
            let context = "driver: \(run.stdoutText)\n\(run.stderr.suffix(2000))\nserver log:\n\(server.log.suffix(3000))"
            #expect(summary.failure == nil, "\(context)")
            #expect(summary.errors.isEmpty, "console errors: \(summary.errors)")
            #expect(summary.connection?.hasPrefix("已连接") == true, "\(context)")
            #expect(summary.state == "done", "\(context)")
            #expect(summary.row?.text == sentence, "the list shows the text as sent: \(context)")
            #expect(summary.row?.badge?.contains("done") == true)
            #expect(summary.row?.onset?.hasPrefix("起播 ") == true, "the onset latency is shown: \(context)")
            #expect(summary.skip == "nothing is speaking", "POST /skip's reply shown: \(context)")
            #expect(summary.volume == "音量已设为 100% | 100%", "PUT /volume's reply, and the status event after it: \(context)")
            #expect(summary.phoneOverflow == false, "at 412 px the page scrolls sideways")
            #expect(run.status == 0 && summary.ok, "\(context)")
            #expect(FileManager.default.fileExists(atPath: screenshot))

            // The server took the sentence intact (UTF-8 through the browser's JSON) and spoke it.
            let number = try #require(summary.number)
            #expect(server.log.contains("speaking #\(number) \"\(sentence)\""), "\(server.log.suffix(3000))")
            #expect(server.waitForLog("spoke #\(number)"))
            let heard = waitForSpeech(in: recorder)
            let expected = try Rendering(sentence).soundingDuration
            #expect(abs(heard - expected) < 0.15 * expected, "heard \(heard) s, render gives \(expected) s")
            #expect(server.stop() == 0)
        }

        /// Waits until the recording holds speech followed by 0.8 s of quiet; returns how long it sounded.
        func waitForSpeech(in recorder: MonitorRecorder) -> Double {
            recorder.waitUntil(timeout: 30) { samples in
                let analysis = SignalAnalysis(samples, sampleRate: recorder.sampleRate)
                guard let last = analysis.segments().last else { return false }
                return analysis.duration - last.end >= 0.8
            }
            return recorder.analysis.soundingDuration()
        }
    }
}
