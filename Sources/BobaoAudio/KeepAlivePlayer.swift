import BobaoCore
import CPulse
import Glibc

/// One PulseAudio playback stream for the life of the server. While idle it plays silence, so the sink
/// never suspends and the speaker never sleeps; to speak it flushes the queued silence and writes speech
/// into the same stream; when the synthesizer reports the end of a message the silence resumes behind it.
///
/// Speech is pushed from the synthesizer's thread (`beginUtterance`, `write`, `endUtterance`), the stream is
/// served on libpulse's threaded main loop. The audio path never allocates: every write goes into memory
/// from `pa_stream_begin_write`.
///
/// If the sound server is missing or goes away, the player logs it and reconnects with a capped backoff
/// (the first failures one by one, then summaries, then one line when it is back); an utterance that was
/// cut reports `false` so the caller can say it again.
public final class KeepAlivePlayer: AudioOutput, @unchecked Sendable {
    // Everything below `mainloop` is guarded by the threaded main loop's lock; C callbacks run with it held.
    let configuration: PlayerConfiguration
    let log: @Sendable (String) -> Void
    let mainloop: OpaquePointer
    var context: OpaquePointer?
    var stream: OpaquePointer?
    var reconnectTimer: OpaquePointer?
    var reconnectDelay: Int
    /// Bumped whenever the stream is lost; an utterance started under another generation was cut.
    var generation = 0
    var streamReady = false
    var stopping = false
    var mode = Mode.silence
    var trimming = false
    var utterancePlayed = true
    var lastUtteranceEnd: UInt64 = 0  // pa_rtclock microseconds
    var everConnected = false
    /// The failures since the stream was last open: the first few are logged, then summaries.
    var outage = RepeatedFault(
        "still no playback stream", noun: "failure", logFirst: 3, clock: { Double(pa_rtclock_now()) / 1_000_000 })
    /// When the current utterance started and how many bytes it has put into the stream: the speech cannot
    /// end before `utteranceStart + utteranceBytes / bytesPerSecond`, whatever the timing says.
    var utteranceStart: UInt64 = 0
    var utteranceBytes = 0
    /// The timer that marks the current utterance played out; cancelled when the utterance is cut, so it
    /// can never fire for a later one.
    var playedOutTimer: OpaquePointer?

    enum Mode {
        /// The write callback feeds silence.
        case silence
        /// Speech is being written by the synthesizer's thread.
        case speech
        /// The last speech is written; waiting for the timing that says when it will have been heard.
        case ending
    }

    public init(configuration: PlayerConfiguration = PlayerConfiguration(), log: @escaping @Sendable (String) -> Void) {
        self.configuration = configuration
        self.log = log
        reconnectDelay = configuration.reconnectInitialMilliseconds
        mainloop = pa_threaded_mainloop_new()
        pa_threaded_mainloop_set_name(mainloop, "bobao.pulse")
    }

    deinit {
        pa_threaded_mainloop_free(mainloop)
    }

    var userdata: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    func lock() { pa_threaded_mainloop_lock(mainloop) }
    func unlock() { pa_threaded_mainloop_unlock(mainloop) }
    func wait() { pa_threaded_mainloop_wait(mainloop) }
    func signal() { pa_threaded_mainloop_signal(mainloop, 0) }

    /// Starts the main loop and the first connection attempt; returns at once.
    public func start() {
        pa_threaded_mainloop_start(mainloop)
        lock()
        connect()
        unlock()
    }

    /// Whether the stream is open and playing (silence or speech).
    public var isReady: Bool {
        lock()
        defer { unlock() }
        return streamReady
    }

    // MARK: Speaking

    /// Blocks until the stream is open (or the player stops). Returns whether it is open.
    public func waitUntilReady() -> Bool {
        lock()
        defer { unlock() }
        while !streamReady && !stopping { wait() }
        return streamReady && !stopping
    }

    /// Blocks until the stream is open, then drops the silence queued in it and starts an utterance.
    /// Returns nil if the player is stopping.
    public func beginUtterance() -> Utterance? {
        lock()
        defer { unlock() }
        while !streamReady && !stopping { wait() }
        guard let stream, !stopping else { return nil }
        cancelPlayedOutTimer()
        mode = .speech
        trimming = true
        utterancePlayed = false
        utteranceStart = pa_rtclock_now()
        utteranceBytes = 0
        // Drop the queued silence: the server rewinds the sink and the speech written next plays at once.
        if let operation = pa_stream_flush(stream, nil, nil) { pa_operation_unref(operation) }
        // Keep the configured gap after the previous announcement.
        let sinceLast = Int((pa_rtclock_now() - lastUtteranceEnd) / 1000)
        if sinceLast < configuration.gapMilliseconds {
            let bytes = configuration.bytes(milliseconds: configuration.gapMilliseconds - sinceLast)
            writeSilence(stream, bytes: bytes)
            utteranceBytes += bytes
        }
        return Utterance(session: generation)
    }

    func cancelPlayedOutTimer() {
        guard let playedOutTimer else { return }
        pa_threaded_mainloop_get_api(mainloop).pointee.time_free(playedOutTimer)
        self.playedOutTimer = nil
    }

    /// Writes speech samples, waiting while the stream's buffer is full. Returns false if the stream was
    /// lost, which cuts the utterance.
    @discardableResult
    public func write(_ samples: UnsafeBufferPointer<Int16>, for utterance: Utterance) -> Bool {
        lock()
        defer { unlock() }
        var start = 0
        if trimming {
            let threshold = configuration.leadingSilenceThreshold
            while start < samples.count && abs(Int(samples[start])) < Int(threshold) { start += 1 }
            if start < samples.count { trimming = false }
        }
        guard let base = samples.baseAddress, start < samples.count else { return utterance.session == generation }
        var source = UnsafeRawPointer(base + start)
        var remaining = (samples.count - start) * 2
        while remaining > 0 {
            guard utterance.session == generation, let stream, streamReady else { return false }
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

    /// The synthesizer reported the end of the message: resume the silence behind the speech, and learn
    /// from the server when the last sample will have been heard.
    public func endUtterance(_ utterance: Utterance) {
        lock()
        defer { unlock() }
        guard utterance.session == generation, let stream, streamReady else { return }
        mode = .ending
        if let operation = pa_stream_update_timing_info(stream, onTimingUpdated, userdata) {
            pa_operation_unref(operation)
        } else {
            finishEnding(latency: 0)
        }
    }

    /// Waits until the utterance has been played out. Returns false if the stream was lost first (the
    /// utterance was cut and should be said again) or the player stopped. Once played out, it stays played
    /// out, whatever happens to the stream afterwards.
    public func waitUntilPlayed(_ utterance: Utterance) -> Bool {
        lock()
        defer { unlock() }
        while !utterancePlayed && utterance.session == generation && !stopping { wait() }
        return utterancePlayed
    }

    /// Whether the player is shutting down (so a cut utterance was cut by the shutdown).
    public var isStopping: Bool {
        lock()
        defer { unlock() }
        return stopping
    }

    /// Called on the main loop with fresh timing: the speech ends `latency` from now, and never before
    /// everything written for it has had time to play.
    func finishEnding(latency: UInt64) {
        guard mode == .ending, let stream else { return }
        mode = .silence
        let size = pa_stream_writable_size(stream)
        if size > 0 { writeSilence(stream, bytes: size) }
        let now = pa_rtclock_now()
        let earliest = utteranceStart + UInt64(utteranceBytes) * 1_000_000 / UInt64(configuration.bytesPerSecond)
        let end = max(now + latency, earliest)
        cancelPlayedOutTimer()
        playedOutTimer = pa_context_rttime_new(context, end, onUtterancePlayedOut, userdata)
        if playedOutTimer == nil { markPlayed() }
    }

    func markPlayed() {
        utterancePlayed = true
        lastUtteranceEnd = pa_rtclock_now()
        signal()
    }

    /// Writes `bytes` of silence. Main loop lock held.
    func writeSilence(_ stream: OpaquePointer, bytes: Int) {
        var remaining = bytes & ~1
        while remaining > 0 {
            var target: UnsafeMutableRawPointer?
            var granted = remaining
            guard pa_stream_begin_write(stream, &target, &granted) == 0, let target, granted > 0 else { return }
            granted = min(granted, remaining) & ~1
            target.initializeMemory(as: UInt8.self, repeating: 0, count: granted)
            pa_stream_write(stream, target, granted, nil, 0, PA_SEEK_RELATIVE)
            remaining -= granted
        }
    }

    // TODO(issue 9): real implementations.
    public func waitUntilReady(until deadline: Double) -> Bool { waitUntilReady() }
    public func cut(_ utterance: Utterance) {}
    public var status: OutputStatus { OutputStatus(state: isReady ? "playing" : "connecting") }

    // MARK: Stopping

    /// Closes the stream and the connection and stops the main loop. Speech being written is cut.
    public func stop() {
        lock()
        guard !stopping else { return unlock() }
        stopping = true
        tearDownConnection()
        signal()
        unlock()
        pa_threaded_mainloop_stop(mainloop)
    }
}
