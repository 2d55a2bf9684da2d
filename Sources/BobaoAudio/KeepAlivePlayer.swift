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
/// cut reports `false` so the caller can say it again. `cut` drops an utterance on purpose, from any thread
/// (see KeepAlivePlayer+Cutting.swift).
public final class KeepAlivePlayer: AudioOutput, @unchecked Sendable {
    // Everything below `mainloop` is guarded by the threaded main loop's lock; C callbacks run with it held.
    let configuration: PlayerConfiguration
    let log: @Sendable (String) -> Void
    let mainloop: OpaquePointer
    var context: OpaquePointer?
    var stream: OpaquePointer?
    var reconnectTimer: OpaquePointer? { didSet { observe(oldValue == nil, reconnectTimer == nil) } }
    var reconnectDelay: Int
    /// Bumped whenever the stream is lost; an utterance started under another generation was cut.
    var generation = 0
    var streamReady = false { didSet { observe(oldValue, streamReady) } }
    var stopping = false { didSet { observe(oldValue, stopping) } }
    var mode = Mode.silence
    /// Whether the current utterance has not yet had a loud sample: quiet ones are dropped until it has.
    var trimming = false
    /// Quiet samples of the current utterance held back from the stream until a louder one follows them:
    /// the quiet a synthesizer writes after its last word is dropped at the end, so `--gap` alone separates
    /// two announcements. Allocated once; the audio path never allocates.
    let heldQuiet: UnsafeMutableBufferPointer<Int16>
    var heldCount = 0
    /// With `--keepalive noise`, a second of faint noise the idle stream loops; nil for digital silence.
    let keepAliveNoise: UnsafeMutableBufferPointer<Int16>?
    var noiseCursor = 0
    var utterancePlayed = true
    var lastUtteranceEnd: UInt64 = 0  // pa_rtclock microseconds
    var everConnected = false
    /// Counts `wake()` calls: a `waitUntilReady(until:)` returns when it changes.
    var wakeups = 0
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
    /// The timing query `endUtterance` sent, until it answers; cancelled when the utterance is cut, so its
    /// answer can never end a later one.
    var timingUpdate: OpaquePointer?
    /// The latest utterance's serial: `beginUtterance` counts up, so a `cut` meant for an earlier one misses.
    var serial = 0
    /// Whether the latest utterance was cut by `cut`: its writes, end and wait all give up.
    var currentCut = false
    /// Set by `cut`: the next utterance starts at once, without the `--gap`.
    var skipNextGap = false
    /// The last connection or stream failure, as logged, for `status`.
    var lastError: String? { didSet { observe(oldValue, lastError) } }
    /// The stream volume set by `setVolume(percent:)`; nil leaves it to the sound server.
    var volumePercent: Int?
    /// `--keepalive off`: the stream is closed because the player is idle (the sound server is there).
    var streamClosedWhileIdle = false { didSet { observe(oldValue, streamClosedWhileIdle) } }
    /// `--keepalive off`: closes the stream once the player has been idle a while.
    var idleCloseTimer: OpaquePointer?
    /// The stream asks for the shallow speech buffer; the timer that returns it to the deep idle one.
    var speechBuffered = false
    var idleBufferTimer: OpaquePointer?
    // Sinks and corking (KeepAlivePlayer+Sinks.swift, KeepAlivePlayer+Corking.swift)
    /// The server's sinks as last listed, and the listing being gathered.
    var sinkNames: [String]?
    var listedSinks: [String] = []
    /// The sink listing under way; another one asked for meanwhile runs after it (`relistSinks`).
    var sinkListing: OpaquePointer?
    var relistSinks = false
    /// The stream failure the listing under way answers: retried with backoff if the sink is there after all.
    var sinkFailure: String?
    /// The sink is missing (`--sink NAME` is not there, or the server has none): announcements wait for it.
    var awaitingSink = false { didSet { observe(oldValue, awaitingSink) } }
    /// Lists the sinks again: after a stream failure's backoff, or slowly while one is missing (the fallback
    /// for a missed event).
    var sinkTimer: OpaquePointer?
    /// The checks that found the sink missing since the stream was last open: the first is logged, then summaries.
    var sinkOutage = RepeatedFault(
        "still no sink", noun: "check", logFirst: 1, clock: { Double(pa_rtclock_now()) / 1_000_000 })
    /// The stream has reached READY (whether or not it is held).
    var streamOpen = false { didSet { observe(oldValue, streamOpen) } }
    /// The server asked the stream to cork (module-role-cork); the stream opened muted (a cork request it
    /// missed; `mutedAtOpenChecked` is the sink input whose mute was looked at); its sink is suspended; the
    /// player has corked it.
    var corkRequested = false
    var mutedAtOpen = false
    var mutedAtOpenChecked: UInt32?
    var sinkSuspended = false
    var streamCorked = false
    /// Why the open stream is held (not ready, the queue waits), or nil.
    var heldBy: HoldCause? { didSet { observe(oldValue, heldBy) } }
    /// How many announcements wait (the one being spoken included), for the log line of a hold.
    var waitingCount: (@Sendable () -> Int)?
    /// Told when what `status` reports may have changed (KeepAlivePlayer+Observing.swift): the properties
    /// above that `status` reads call it from their `didSet`, with the main loop lock held.
    var stateObservers: [@Sendable () -> Void] = []
    /// Runs every `configuration.heartbeatMilliseconds` on the main loop thread, while it runs.
    let heartbeat: (@Sendable () -> Void)?
    var heartbeatTimer: OpaquePointer?

    enum Mode {
        /// The write callback feeds silence.
        case silence
        /// Speech is being written by the synthesizer's thread.
        case speech
        /// The last speech is written; waiting for the timing that says when it will have been heard.
        case ending
    }

    /// - Parameter heartbeat: runs on the main loop's own thread every `configuration.heartbeatMilliseconds`
    ///   from `start` to `stop`, whether or not a sound server is there; a main loop that is stuck misses it
    ///   (systemd's watchdog pings hang on it). It must be quick and must not call the player.
    public init(
        configuration: PlayerConfiguration = PlayerConfiguration(), log: @escaping @Sendable (String) -> Void,
        heartbeat: (@Sendable () -> Void)? = nil
    ) {
        self.configuration = configuration
        self.log = log
        self.heartbeat = heartbeat
        reconnectDelay = configuration.reconnectInitialMilliseconds
        heldQuiet = .allocate(capacity: max(1, configuration.sampleRate * configuration.heldQuietMilliseconds / 1000))
        keepAliveNoise = Self.makeNoise(configuration)
        mainloop = pa_threaded_mainloop_new()
        pa_threaded_mainloop_set_name(mainloop, "bobao.pulse")
    }

    deinit {
        heldQuiet.deallocate()
        keepAliveNoise?.deallocate()
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
        startHeartbeat()
        connect()
        unlock()
    }

    /// Whether the stream is open and playing (silence or speech).
    public var isReady: Bool {
        lock()
        defer { unlock() }
        return canPlay
    }

    // MARK: Speaking

    /// Blocks until the stream is open (or the player stops). Returns whether it is open.
    public func waitUntilReady() -> Bool {
        lock()
        defer { unlock() }
        while !canPlay && !stopping { wait() }
        return canPlay && !stopping
    }

    /// Blocks until the stream is open, the player stops, or `deadline` (CLOCK_MONOTONIC seconds, as
    /// `WallClock.monotonicSeconds()`) passes. Returns whether it is open.
    ///
    /// A one-shot main-loop timer wakes the wait at the deadline. The main loop API takes a wall-clock time,
    /// which it turns into its own monotonic time when the timer is armed, so the wall clock's later jumps
    /// do not move it; a wake-up before the deadline (another waiter's timer, a state change) re-arms it.
    public func waitUntilReady(until deadline: Double) -> Bool {
        lock()
        defer { unlock() }
        let api = pa_threaded_mainloop_get_api(mainloop)!
        var timer: OpaquePointer?
        defer { if let timer { api.pointee.time_free(timer) } }
        let woken = wakeups
        while !canPlay && !stopping && wakeups == woken {
            // Armed for a minute at most, and again: PulseAudio keeps a timer's delay in an int of
            // milliseconds, which a ttl of weeks would overflow (an assertion abort inside libpulse).
            let remaining = min(deadline - Self.monotonicSeconds(), 60)
            guard remaining > 0 else { break }
            var when = timeval()
            pa_timeval_add(pa_gettimeofday(&when), pa_usec_t(remaining * 1_000_000) + 1)
            if let timer {
                api.pointee.time_restart(timer, &when)
            } else {
                timer = api.pointee.time_new(api, &when, onWaitDeadline, UnsafeMutableRawPointer(mainloop))
                guard timer != nil else { break }
            }
            wait()
        }
        return canPlay && !stopping
    }

    /// CLOCK_MONOTONIC in seconds, the clock of `waitUntilReady(until:)`'s deadline.
    static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// Blocks until the stream is open, then drops the silence queued in it and starts an utterance.
    /// Returns nil if the player is stopping.
    public func beginUtterance() -> Utterance? {
        lock()
        defer { unlock() }
        cancelIdleClose()
        while !streamReady && !stopping {
            while !canPlay && !stopping { wait() }
            openStreamClosedWhileIdle()
        }
        guard let stream, !stopping else { return nil }
        cancelPlayedOutTimer()
        cancelTimingUpdate()
        serial += 1
        currentCut = false
        mode = .speech
        trimming = true
        heldCount = 0
        utterancePlayed = false
        utteranceStart = pa_rtclock_now()
        utteranceBytes = 0
        useSpeechBuffer(stream)
        // Drop the queued silence: the server rewinds the sink and the speech written next plays at once.
        if let operation = pa_stream_flush(stream, nil, nil) { pa_operation_unref(operation) }
        // Keep the configured gap after the previous announcement, unless that one was cut to make way.
        let sinceLast = Int((pa_rtclock_now() - lastUtteranceEnd) / 1000)
        if sinceLast < configuration.gapMilliseconds && !skipNextGap {
            let bytes = configuration.bytes(milliseconds: configuration.gapMilliseconds - sinceLast)
            writeSilence(stream, bytes: bytes)
            utteranceBytes += bytes
        }
        skipNextGap = false
        return Utterance(session: generation, serial: serial)
    }

    /// Whether `utterance` is the latest one and still going: neither cut nor lost with its stream.
    func isLive(_ utterance: Utterance) -> Bool {
        utterance.serial == serial && utterance.session == generation && !currentCut
    }

    func cancelPlayedOutTimer() {
        guard let playedOutTimer else { return }
        pa_threaded_mainloop_get_api(mainloop).pointee.time_free(playedOutTimer)
        self.playedOutTimer = nil
    }

    /// The synthesizer reported the end of the message: resume the silence behind the speech, and learn
    /// from the server when the last sample will have been heard. Does nothing for a cut utterance.
    public func endUtterance(_ utterance: Utterance) {
        lock()
        defer { unlock() }
        guard isLive(utterance), mode == .speech, let stream, streamReady else { return }
        heldCount = 0  // the quiet after the last word: the gap replaces it
        mode = .ending
        timingUpdate = pa_stream_update_timing_info(stream, onTimingUpdated, userdata)
        if timingUpdate == nil { finishEnding(latency: 0) }
    }

    /// Waits until the utterance has been played out. Returns false if it was cut first (by `cut`, or by
    /// the loss of the stream: then it should be said again) or the player stopped. Once played out, it
    /// stays played out, whatever happens to the stream afterwards. Only the latest utterance is tracked:
    /// asking about an earlier one answers false.
    public func waitUntilPlayed(_ utterance: Utterance) -> Bool {
        lock()
        defer { unlock() }
        while !utterancePlayed && isLive(utterance) && !stopping { wait() }
        return utterancePlayed && utterance.serial == serial
    }

    /// The stream's state, the sink it plays to (the configured one while there is no stream), the sinks
    /// there are, why it waits, and the last failure. Callable from any thread, a main-loop callback's included.
    public var status: OutputStatus {
        withLoopLock {
            var status = OutputStatus(state: "connecting", sink: configuration.sinkName, sinks: sinkNames, lastError: lastError)
            if let stream, streamOpen, let device = pa_stream_get_device_name(stream) {
                status.sink = String(cString: device)
            }
            if stopping {
                status.state = "stopped"
            } else if streamReady {
                status.state = "playing"
            } else if streamClosedWhileIdle {
                status.state = "idle"
            } else if reconnectTimer != nil {
                status.state = "connecting"
            } else if let heldBy {
                status.state = "corked"
                status.reason = describe(heldBy)
            } else if awaitingSink {
                status.state = "no-sink"
                status.reason = missingSinkDescription
            }
            return status
        }
    }

    /// Runs `body` with the main loop lock held: taken here, or already held when this is the main loop's
    /// own thread (a callback), where taking it again would abort.
    public func wake() {
        withLoopLock {
            wakeups += 1
            signal()
        }
    }

    func withLoopLock<T>(_ body: () -> T) -> T {
        if pa_threaded_mainloop_in_thread(mainloop) != 0 { return body() }
        lock()
        defer { unlock() }
        return body()
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
        if let timingUpdate {
            pa_operation_unref(timingUpdate)  // answered: libpulse is done with it
            self.timingUpdate = nil
        }
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
        armIdleClose()
        armIdleBuffer()
        signal()
    }

    // MARK: Stopping

    /// Closes the stream and the connection and stops the main loop. Speech being written is cut.
    public func stop() {
        lock()
        guard !stopping else { return unlock() }
        stopping = true
        stopHeartbeat()
        tearDownConnection()
        signal()
        unlock()
        pa_threaded_mainloop_stop(mainloop)
    }
}

/// `waitUntilReady(until:)`'s timer: wakes the waiters (the user data is the threaded main loop).
let onWaitDeadline: @convention(c) (
    UnsafeMutablePointer<pa_mainloop_api>?, OpaquePointer?, UnsafePointer<timeval>?, UnsafeMutableRawPointer?
) -> Void = { _, _, _, userdata in
    pa_threaded_mainloop_signal(OpaquePointer(userdata), 0)
}
