import BobaoCore
import BobaoServer
import BobaoTestSupport
import Foundation
import Testing

extension SoundSuites {
    /// `--sink NAME` that is not there yet, goes away and comes back; the default sink changing under a
    /// server without `--sink`. Against the test run's sound server (PulseAudio or pipewire-pulse), with
    /// sinks of the test's own.
    @Suite(.serialized, .timeLimit(.minutes(2)))
    struct SinkTests {
        let sound: TestSoundServer.Connection

        init() throws {
            sound = try TestSoundServer.shared()
        }

        @Test func aSinkThatAppearsLaterSpeaksWhatWasAcceptedBeforeIt() throws {
            let control = SoundControl(sound)
            defer { control.close() }
            let late = SoundControl.uniqueName("late"), capture = SoundControl.uniqueName("capture")
            // What reaches `late` is recorded on the monitor of `capture`, its master, which exists before it: a
            // recorder can only attach to a sink that is there, and Bobao opens its stream within milliseconds
            // of `late` appearing.
            try control.addNullSink(capture)
            let recorder = try MonitorRecorder(address: sound.address, sinkName: capture)
            let bobao = try ServerProcess(arguments: ["--no-spool", "--sink", late], pulseServer: sound.address)
            let warning = "no sink '\(late)' (sinks: "
            try #require(bobao.waitForLog(warning), "\(bobao.log)")
            let warned = try #require(bobao.logLines(containing: warning).first)
            #expect(warned.contains(sound.sinkName) && warned.contains(capture), "it lists the sinks there are: \(warned)")
            #expect(warned.contains("lines are still accepted"))

            var status = try bobao.soundStatus()
            #expect(status["state"] as? String == "no-sink", "\(status)")
            #expect(status["sink"] as? String == late)
            let sinks = try #require(status["sinks"] as? [String], "\(status)")
            #expect(sinks.contains(sound.sinkName) && sinks.contains(capture) && !sinks.contains(late))
            let reason = try #require(status["reason"] as? String)
            #expect(reason.hasPrefix(warning), "\(reason)")

            // One that runs out of time waiting fails, and says why.
            let client = try EventClient(port: bobao.port)
            try client.send(#"{"text": "一号", "ttl": 0.5, "wait": true}"# + "\n")
            let failed = try #require(client.waitForEvent("failed", number: 1, timeout: 10), "\(client.lines)")
            let failure = try #require(failed.object?["reason"] as? String)
            #expect(failure.contains(warning), "\(failure)")

            // One accepted now waits for the sink, for as long as its ttl.
            let text = "请保管好您的随身物品"
            let rendering = try Rendering(text)
            try client.send(#"{"text": "\#(text)", "wait": true}"# + "\n")
            #expect(client.waitFor(timeout: 10) { $0.contains { $0.text == "OK 2" } }, "\(client.lines)")
            // No retries while waiting: the warning once, no failure or retry lines (the fallback listing comes
            // only every 10 s, and is not logged).
            #expect(bobao.logLines(containing: "lines are still accepted").count == 1, "\(bobao.log)")
            #expect(bobao.logLines(containing: "retrying").isEmpty, "\(bobao.log)")

            let begin = recorder.samples.count
            try control.load("module-remap-sink", "sink_name=\(late)", "master=\(capture)")
            #expect(bobao.waitForLog("keep-alive stream open on sink \(late)", timeout: 10), "\(bobao.log)")
            try #require(client.waitForEvent("done", number: 2, timeout: 20) != nil, "\(client.lines)")
            #expect(recorder.waitForQuiet(after: begin, quiet: 0.4))
            let heard = recorder.analysis(from: begin)
            let match = try #require(heard.contourMatch(of: rendering.opening(seconds: 0.6), startingIn: 0..<heard.samples.count))
            #expect(match.correlation > 0.9, "the announcement's start was not heard: \(match)")
            let expected = rendering.soundingDuration
            #expect(abs(heard.soundingDuration() - expected) < 0.1 * expected,
                    "heard for \(heard.soundingDuration()) s; its rendering sounds \(expected) s")
            status = try bobao.soundStatus()
            #expect(status["state"] as? String == "playing" && status["sink"] as? String == late, "\(status)")
            #expect(bobao.stop() == 0)
        }

        @Test func aSinkThatGoesAwayIsWaitedForAndNothingWandersElsewhere() throws {
            let control = SoundControl(sound)
            defer { control.close() }
            let usb = SoundControl.uniqueName("usb")
            let module = try control.addNullSink(usb)
            let recorder = try MonitorRecorder(address: sound.address, sinkName: sound.sinkName)
            let bobao = try ServerProcess(arguments: ["--no-spool", "--sink", usb], pulseServer: sound.address)
            try #require(bobao.waitForLog("keep-alive stream open on sink \(usb)"), "\(bobao.log)")

            try control.unload(module)
            #expect(bobao.waitForLog("no sink '\(usb)' (sinks: ", timeout: 10), "\(bobao.log)")
            #expect(try bobao.soundStatus()["state"] as? String == "no-sink")
            // The stream did not move to the default sink: nothing of Bobao's plays there.
            let inputs = try control.pactl("list", "sink-inputs")
            #expect(!inputs.contains("application.name = \"Bobao\""), "\(inputs)")
            let begin = recorder.samples.count
            let client = try EventClient(port: bobao.port)
            try client.send(#"{"text": "二号", "wait": true}"# + "\n")
            #expect(client.waitForLines(1).first?.text == "OK 1")

            // Back: the stream reopens on it, and the waiting announcement is spoken there.
            try control.addNullSink(usb)
            #expect(bobao.waitForLog("keep-alive stream reopened on sink \(usb)", timeout: 10), "\(bobao.log)")
            #expect(client.waitForEvent("done", number: 1, timeout: 20) != nil, "\(client.lines)")
            #expect(recorder.analysis(from: begin).segments().isEmpty, "nothing was heard on the default sink")
            #expect(bobao.stop() == 0)
        }

        @Test func withoutSinkTheStreamFollowsTheDefaultSink() throws {
            let control = SoundControl(sound)
            defer { control.close() }
            let next = SoundControl.uniqueName("next")
            try control.addNullSink(next)
            let recorder = try MonitorRecorder(address: sound.address, sinkName: next)
            let bobao = try ServerProcess(arguments: ["--no-spool"], pulseServer: sound.address)
            let first = try control.defaultSink()
            try #require(bobao.waitForLog("keep-alive stream open on sink \(first)"), "\(bobao.log)")

            try control.setDefaultSink(next)
            #expect(bobao.waitForLog("keep-alive stream moved to sink \(next)", timeout: 10), "\(bobao.log)")
            #expect(try bobao.soundStatus()["sink"] as? String == next)
            let text = "欢迎光临"
            let rendering = try Rendering(text)
            let begin = recorder.samples.count
            let client = try EventClient(port: bobao.port)
            try client.send(#"{"text": "\#(text)", "wait": true}"# + "\n")
            try #require(client.waitForEvent("done", number: 1, timeout: 20) != nil, "\(client.lines)")
            #expect(recorder.waitForQuiet(after: begin, quiet: 0.4))
            let heard = recorder.analysis(from: begin)
            let expected = rendering.soundingDuration
            #expect(abs(heard.soundingDuration() - expected) < 0.1 * expected,
                    "heard on the new default sink for \(heard.soundingDuration()) s; its rendering sounds \(expected) s")
            #expect(bobao.stop() == 0)
        }
    }
}
