import BobaoTestSupport
import Foundation
import Testing

extension SoundSuites {
    /// Back-to-back announcements are `--gap` apart at the sink, measured from the last sound of one to the
    /// first of the next, whatever quiet eSpeak NG writes around its words.
    @Suite(.serialized, .timeLimit(.minutes(2)))
    struct GapTests {
        static let texts = ["请到窗口", "欢迎光临", "谢谢惠顾", "祝您愉快", "请取餐"]

        @Test(arguments: [0, 300, 1000])
        func fiveBackToBackAnnouncementsAreTheGapApart(gap: Int) throws {
            let sound = try TestSoundServer.shared()
            // A recorder that asks for little latency drags the sink's down with it, and then what the sink renders
            // is what is heard; one that asks for a lot (as plain `parec` does) leaves the sink at its own, which
            // is what a kiosk's speaker gets. Bobao's gaps must hold for the latter.
            let recorder = try MonitorRecorder(address: sound.address, sinkName: sound.sinkName, latencyMilliseconds: 2000)
            // With a spool, as a server runs by default: its writes happen between announcements.
            let spool = NSTemporaryDirectory() + "bobao-gap-\(gap)-\(getpid()).db"
            defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: spool + suffix) } }
            let bobao = try ServerProcess(arguments: ["--spool", spool, "--gap", "\(gap)"], pulseServer: sound.address)
            #expect(bobao.waitForLog("keep-alive stream open"))
            let renderings = try Self.texts.map { try Rendering($0) }
            let rate = recorder.sampleRate
            let begin = recorder.samples.count

            let client = try EventClient(port: bobao.port)
            try client.send(Self.texts.map { #"{"text": "\#($0)", "wait": true}"# + "\n" }.joined())
            client.finishSending()
            try #require(client.waitForEvent("done", number: Self.texts.count, timeout: 40) != nil, "\(client.lines)")
            // The recorder lags the sink (by up to its 2 s), so `done` comes before the recording has the last one:
            // wait for a quiet longer than any gap.
            #expect(recorder.waitForQuiet(after: begin, quiet: Double(gap) / 1000 + 0.3))
            let heard = recorder.analysis(from: begin)

            // Where each one's first loud sample was heard: the first one's where the recording first gets
            // loud, each later one's where its opening's loudness contour matches, near where the gap puts it.
            // What the player writes of each is its rendering from the first to the last sample reaching the
            // player's silence threshold (64); the recording's edges are held against those.
            var gaps: [Double] = []
            var expectedStart = try #require(heard.firstLoudSample(threshold: 500)) - renderings[0].loudOffset
            for (index, rendering) in renderings.enumerated() {
                let found: Int
                if index == 0 {
                    found = expectedStart
                } else {
                    let match = try #require(heard.contourMatch(
                        of: rendering.opening(seconds: 0.4),
                        startingIn: (expectedStart - rate / 5)..<(expectedStart + rate / 5)))
                    #expect(match.correlation > 0.9, "\(Self.texts[index]) not found near its place: \(match)")
                    found = match.index - rendering.loudOffset
                    gaps.append(Double(found - expectedStart) / Double(rate) + Double(gap) / 1000)
                }
                expectedStart = found + rendering.loudSpan + gap * rate / 1000
            }
            let milliseconds = gaps.map { Int(($0 * 1000).rounded()) }
            print("--gap \(gap): gaps heard \(milliseconds) ms")
            for measured in milliseconds {
                #expect(abs(measured - gap) <= 30, "--gap \(gap): gaps heard \(milliseconds) ms")
            }
            #expect(bobao.stop() == 0)
        }
    }
}

extension Rendering {
    /// How many samples the player writes of it: from the first to the last sample reaching 64.
    var loudSpan: Int {
        let samples = analysis.samples
        guard let first = samples.firstIndex(where: { abs(Int($0)) >= 64 }),
              let last = samples.lastIndex(where: { abs(Int($0)) >= 64 }) else { return 0 }
        return last - first + 1
    }

    /// Where `opening(seconds:)` starts, in samples after the first sample the player writes.
    var loudOffset: Int {
        let samples = analysis.samples
        let first = samples.firstIndex(where: { abs(Int($0)) >= 64 }) ?? 0
        return (analysis.firstLoudSample() ?? first) - first
    }
}
