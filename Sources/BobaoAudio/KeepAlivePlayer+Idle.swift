import CPulse

// `--keepalive off`: no stream while there is nothing to say. The stream opens when an utterance begins and
// closes once the player has been idle for `idleCloseMilliseconds`, so the sink may suspend in between.
// Every function here runs with the main loop lock held.
extension KeepAlivePlayer {
    /// Whether an utterance can begin: the stream is open, or (with `--keepalive off`) the sound server is
    /// connected and the stream closed only for idleness.
    var canPlay: Bool { streamReady || streamClosedWhileIdle }

    /// The sink is there: open the stream, or with `--keepalive off` wait for something to say.
    func openStreamUnlessIdle() {
        guard configuration.keepAlive == .off else { return openStream() }
        guard !streamClosedWhileIdle else { return }
        streamClosedWhileIdle = true
        reconnectDelay = configuration.reconnectInitialMilliseconds
        let back = [outage.resolved(), sinkOutage.resolved()].compactMap { $0 }.map { "; back \($0)" }.joined()
        log("ready: the stream opens when there is something to say (--keepalive off)\(back)")
        signal()
    }

    /// Opens the stream an utterance needs, if it was closed for idleness, and waits for it. Returns once the
    /// stream is ready, the connection failed (then `canPlay` is false until it is back), or the player stops.
    func openStreamClosedWhileIdle() {
        guard streamClosedWhileIdle, !streamReady else { return }
        streamClosedWhileIdle = false
        openStream()
        while stream != nil && !streamReady && reconnectTimer == nil && !stopping { wait() }
    }

    /// Arms the idle timer once an utterance has played out or was cut (`--keepalive off` only).
    func armIdleClose() {
        guard configuration.keepAlive == .off, let context else { return }
        cancelIdleClose()
        let when = pa_rtclock_now() + pa_usec_t(configuration.idleCloseMilliseconds) * 1000
        idleCloseTimer = pa_context_rttime_new(context, when, onIdleCloseTimerFired, userdata)
    }

    func cancelIdleClose() {
        guard let idleCloseTimer else { return }
        pa_threaded_mainloop_get_api(mainloop).pointee.time_free(idleCloseTimer)
        self.idleCloseTimer = nil
    }

    /// The idle timer fired: close the stream if nothing is being said.
    func idleCloseTimerDidFire() {
        idleCloseTimer = nil
        guard mode == .silence, utterancePlayed || currentCut, streamReady, stream != nil else { return }
        releaseStream()
        streamReady = false
        streamClosedWhileIdle = true
        log("idle: stream closed until the next announcement (--keepalive off)")
    }
}

let onIdleCloseTimerFired: @convention(c) (
    UnsafeMutablePointer<pa_mainloop_api>?, OpaquePointer?, UnsafePointer<timeval>?, UnsafeMutableRawPointer?
) -> Void = { api, event, _, userdata in
    api?.pointee.time_free(event)
    Unmanaged<KeepAlivePlayer>.fromOpaque(userdata!).takeUnretainedValue().idleCloseTimerDidFire()
}
