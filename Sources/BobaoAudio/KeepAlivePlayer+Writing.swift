import CPulse
import Glibc

// Putting samples into the stream: speech from the synthesizer's thread (trimmed of the quiet before its
// first and after its last loud sample), and silence on the main loop.
extension KeepAlivePlayer {
    /// Writes speech samples, waiting while the stream's buffer is full. Returns false if the utterance was
    /// cut, or the stream was lost, which cuts it too.
    ///
    /// Quiet samples at the start of an utterance are dropped; quiet samples after a loud one are held back
    /// (up to `heldQuietMilliseconds`) until a loud one follows, so those at its end are never written.
    @discardableResult
    public func write(_ samples: UnsafeBufferPointer<Int16>, for utterance: Utterance) -> Bool {
        lock()
        defer { unlock() }
        guard isLive(utterance) else { return false }
        let threshold = Int(configuration.silenceThreshold)
        func loud(_ sample: Int16) -> Bool { abs(Int(sample)) >= threshold }
        var start = 0
        if trimming {
            while start < samples.count && !loud(samples[start]) { start += 1 }
            if start < samples.count { trimming = false }
        }
        guard let base = samples.baseAddress, start < samples.count else { return isLive(utterance) }
        var end = samples.count
        while end > start && !loud(samples[end - 1]) { end -= 1 }
        if end > start {
            // Loud samples: the quiet held so far lies inside the speech after all.
            guard writeHeldQuiet(for: utterance), push(base + start, count: end - start, for: utterance) else {
                return false
            }
            start = end
        }
        return holdQuiet(base + start, count: samples.count - start, for: utterance)
    }

    /// Adds quiet samples to those held back, writing out the oldest when there are too many.
    func holdQuiet(_ samples: UnsafePointer<Int16>, count: Int, for utterance: Utterance) -> Bool {
        let capacity = heldQuiet.count
        if heldCount + count > capacity {
            guard writeHeldQuiet(for: utterance) else { return false }
            if count > capacity {
                guard push(samples, count: count - capacity, for: utterance) else { return false }
                return holdQuiet(samples + (count - capacity), count: capacity, for: utterance)
            }
        }
        (heldQuiet.baseAddress! + heldCount).update(from: samples, count: count)
        heldCount += count
        return true
    }

    func writeHeldQuiet(for utterance: Utterance) -> Bool {
        guard heldCount > 0 else { return true }
        let count = heldCount
        heldCount = 0
        return push(heldQuiet.baseAddress!, count: count, for: utterance)
    }

    /// Writes samples as the stream makes room for them. Main loop lock held (released while waiting).
    func push(_ samples: UnsafePointer<Int16>, count: Int, for utterance: Utterance) -> Bool {
        var source = UnsafeRawPointer(samples)
        var remaining = count * 2
        while remaining > 0 {
            guard isLive(utterance), let stream, streamReady else { return false }
            var size = pa_stream_writable_size(stream)  // (size_t)-1, read as -1, on error
            if size < 0 { return false }
            if size == 0 {
                wait()  // the write-request callback signals when there is room
                continue
            }
            size = min(size, remaining)
            var target: UnsafeMutableRawPointer?
            var granted = size
            guard pa_stream_begin_write(stream, &target, &granted) == 0, let target else { return false }
            granted = min(granted, size) & ~1
            target.copyMemory(from: source, byteCount: granted)
            pa_stream_write(stream, target, granted, nil, 0, PA_SEEK_RELATIVE)
            source += granted
            remaining -= granted
            utteranceBytes += granted
        }
        return true
    }

    /// Writes `bytes` of what the stream plays between words: digital silence, or with `--keepalive noise`
    /// the faint noise that keeps an amplifier from switching off. Main loop lock held.
    func writeSilence(_ stream: OpaquePointer, bytes: Int) {
        var remaining = bytes & ~1
        while remaining > 0 {
            var target: UnsafeMutableRawPointer?
            var granted = remaining
            guard pa_stream_begin_write(stream, &target, &granted) == 0, let target, granted > 0 else { return }
            granted = min(granted, remaining) & ~1
            if let noise = keepAliveNoise {
                fillWithNoise(target.assumingMemoryBound(to: Int16.self), count: granted / 2, from: noise)
            } else {
                target.initializeMemory(as: UInt8.self, repeating: 0, count: granted)
            }
            pa_stream_write(stream, target, granted, nil, 0, PA_SEEK_RELATIVE)
            remaining -= granted
        }
    }

    /// Copies `count` samples of the noise loop, going on where the last copy stopped.
    func fillWithNoise(_ target: UnsafeMutablePointer<Int16>, count: Int, from noise: UnsafeMutableBufferPointer<Int16>) {
        var done = 0
        while done < count {
            let piece = min(count - done, noise.count - noiseCursor)
            (target + done).update(from: noise.baseAddress! + noiseCursor, count: piece)
            done += piece
            noiseCursor = (noiseCursor + piece) % noise.count
        }
    }

    /// A second of white noise whose peak is `levelDBFS` (uniform samples, so its RMS is 4.8 dB lower, from a
    /// fixed-seed generator: the same every start). Nil unless `--keepalive noise`.
    static func makeNoise(_ configuration: PlayerConfiguration) -> UnsafeMutableBufferPointer<Int16>? {
        guard configuration.keepAlive == .noise else { return nil }
        let amplitude = 32768 * pow(10, configuration.keepAliveLevelDBFS / 20)
        let noise = UnsafeMutableBufferPointer<Int16>.allocate(capacity: max(1, configuration.sampleRate))
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for index in noise.indices {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let unit = Double(state >> 11) / Double(1 << 53) * 2 - 1  // [-1, 1)
            noise[index] = Int16(clamping: Int((unit * amplitude).rounded()))
        }
        return noise
    }
}
