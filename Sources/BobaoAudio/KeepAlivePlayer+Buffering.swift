import CPulse

// How far ahead the sink renders. Idle, the stream asks for a deep buffer (`idleBufferMilliseconds`): few
// wake-ups. Speaking, it asks for a shallow one (`speechBufferMilliseconds`), so the sink renders only tens of
// milliseconds ahead of what is heard: the end of one announcement and the start of the next, placed by the
// played-out timer and a flush, are then `--gap` apart in what the sink renders (and its monitor records) as
// well as in what is heard. Back to the deep buffer once the player has been idle `idleCloseMilliseconds`.
// Every function here runs with the main loop lock held.
extension KeepAlivePlayer {
    /// With ADJUST_LATENCY the server gives the sink (tlength - 2 * minreq) / 2 of latency; a minreq near
    /// tlength / 2 would leave the sink at its minimum latency and wake it thousands of times a second.
    /// 2 s with 250 ms pieces: the sink runs with ~750 ms, the client refills four times a second.
    /// While speaking, pieces of a quarter: the sink runs a quarter of the buffer ahead (25 ms of 100).
    func bufferAttributes(milliseconds: Int, speaking: Bool = false) -> pa_buffer_attr {
        let target = UInt32(configuration.bytes(milliseconds: milliseconds))
        return pa_buffer_attr(
            maxlength: UInt32.max,
            tlength: target,
            prebuf: 2,  // one frame: play as soon as anything is queued, also right after a flush
            minreq: target / (speaking ? 4 : 8),
            fragsize: UInt32.max)
    }

    /// Before speech: the shallow buffer (once; it stays while announcements follow each other).
    func useSpeechBuffer(_ stream: OpaquePointer) {
        cancelIdleBuffer()
        guard !speechBuffered else { return }
        speechBuffered = true
        var attributes = bufferAttributes(milliseconds: configuration.speechBufferMilliseconds, speaking: true)
        if let operation = pa_stream_set_buffer_attr(stream, &attributes, nil, nil) { pa_operation_unref(operation) }
    }

    /// Once an utterance has played out or was cut: back to the deep buffer unless another one begins soon.
    func armIdleBuffer() {
        guard speechBuffered, let context else { return }
        cancelIdleBuffer()
        let when = pa_rtclock_now() + pa_usec_t(configuration.idleCloseMilliseconds) * 1000
        idleBufferTimer = pa_context_rttime_new(context, when, onIdleBufferTimerFired, userdata)
    }

    func cancelIdleBuffer() {
        guard let idleBufferTimer else { return }
        pa_threaded_mainloop_get_api(mainloop).pointee.time_free(idleBufferTimer)
        self.idleBufferTimer = nil
    }

    func idleBufferTimerDidFire() {
        idleBufferTimer = nil
        guard speechBuffered, mode == .silence, utterancePlayed || currentCut, streamReady, let stream else { return }
        speechBuffered = false
        var attributes = bufferAttributes(milliseconds: configuration.idleBufferMilliseconds)
        if let operation = pa_stream_set_buffer_attr(stream, &attributes, nil, nil) { pa_operation_unref(operation) }
    }
}

let onIdleBufferTimerFired: @convention(c) (
    UnsafeMutablePointer<pa_mainloop_api>?, OpaquePointer?, UnsafePointer<timeval>?, UnsafeMutableRawPointer?
) -> Void = { api, event, _, userdata in
    api?.pointee.time_free(event)
    Unmanaged<KeepAlivePlayer>.fromOpaque(userdata!).takeUnretainedValue().idleBufferTimerDidFire()
}
