import CPulse

// Interruptions by the sound server: it asks the stream to cork (PA_STREAM_EVENT_REQUEST_CORK, which
// module-role-cork sends, muting the stream too, while a phone call plays), or it suspends the stream's sink
// (`pactl suspend-sink NAME 1`). Either way the player holds the queue:
//
// - It reports not ready (`streamReady` is false while held), so the speaker's `waitUntilReady` waits and
//   `beginUtterance` does not start one.
// - The utterance being spoken is cut as a lost stream cuts it (`generation`: `write` and `waitUntilPlayed`
//   return false, and the speaker says it again from its start), and what was queued of it is flushed, so
//   none of it is heard when the stream plays again. The stream itself stays open.
// - Asked to cork, it corks: module-role-cork sends REQUEST_UNCORK only to a stream that is corked. A
//   suspended sink is not answered with a cork: it plays nothing anyway, and a corked stream would keep a
//   sink that module-suspend-on-idle suspended for lack of playing streams suspended for good.
// - A stream opened while the cork applies (a phone call already going on) misses the request: the server
//   sends it before the stream is known to the client, and only mutes the stream. A stream that is muted when
//   it opens is therefore taken as asked to cork, until it is unmuted or asked to uncork.
//
// When the cork is lifted and the sink runs again, the stream is uncorked, refilled with silence and ready.
// One log line for each. Main loop lock held throughout.
extension KeepAlivePlayer {
    enum HoldCause {
        /// The server asked the stream to cork.
        case corkRequest
        /// The stream was muted when it opened: a cork request it missed.
        case mutedAtOpen
        /// The stream's sink is suspended.
        case suspendedSink
    }

    /// Tells the player how many announcements wait (the one being spoken included), for the log line when
    /// the stream is held. Called on the main loop thread with its lock held, so `count` must not call the
    /// player. Any thread.
    public func setWaitingCount(_ count: @escaping @Sendable () -> Int) {
        withLoopLock { waitingCount = count }
    }

    /// A stream event: the server asks the stream to cork or to uncork.
    func streamEvent(_ name: String) {
        switch name {
        case PA_STREAM_EVENT_REQUEST_CORK: corkRequested = true
        case PA_STREAM_EVENT_REQUEST_UNCORK:
            corkRequested = false
            mutedAtOpen = false
        default: return
        }
        updateHold()
    }

    /// The stream's sink was suspended or resumed.
    func streamSuspendedDidChange() {
        guard let stream else { return }
        sinkSuspended = pa_stream_is_suspended(stream) == 1
        updateHold()
    }

    /// Asks whether the stream is muted: at open (see above), and at each change of a stream muted at open.
    func checkMuted() {
        guard let context, let stream, streamOpen else { return }
        let operation = pa_context_get_sink_input_info(context, pa_stream_get_index(stream), onSinkInputInfo, userdata)
        if let operation { pa_operation_unref(operation) }
    }

    /// The answer of `checkMuted` for sink input `index`: the first one for a stream says whether it opened
    /// muted; later ones (asked for while it is held for that) whether it is still muted.
    func sinkInput(_ index: UInt32, isMuted muted: Bool) {
        guard let stream, streamOpen, index == pa_stream_get_index(stream) else { return }
        if mutedAtOpenChecked != index {
            mutedAtOpenChecked = index
            mutedAtOpen = muted && !corkRequested
        } else if !muted {
            mutedAtOpen = false
        }
        updateHold()
    }

    /// Corks the stream exactly while the server asks, and holds it while anything interrupts it.
    func updateHold() {
        guard let stream, streamOpen else { return }
        let cork = corkRequested || mutedAtOpen
        if cork != streamCorked {
            streamCorked = cork
            if let operation = pa_stream_cork(stream, cork ? 1 : 0, nil, nil) { pa_operation_unref(operation) }
        }
        let cause: HoldCause? = corkRequested ? .corkRequest : mutedAtOpen ? .mutedAtOpen : sinkSuspended ? .suspendedSink : nil
        if let cause, heldBy == nil {
            hold(stream, for: cause)
        } else if cause == nil, let heldBy {
            resume(stream, after: heldBy)
        }
    }

    private func hold(_ stream: OpaquePointer, for cause: HoldCause) {
        heldBy = cause
        cancelPlayedOutTimer()
        cancelTimingUpdate()
        streamReady = false
        mode = .silence
        generation += 1
        // Drop what is queued of the cut speech: it must not be heard when the stream plays again.
        if let operation = pa_stream_flush(stream, nil, nil) { pa_operation_unref(operation) }
        let waiting = waitingCount?() ?? 0
        log("\(describe(cause)): holding \(waiting) announcement\(waiting == 1 ? "" : "s")")
        signal()
    }

    private func resume(_ stream: OpaquePointer, after cause: HoldCause) {
        heldBy = nil
        let size = pa_stream_writable_size(stream)  // (size_t)-1, read as -1, on error
        if size > 0 { writeSilence(stream, bytes: size) }
        streamReady = true
        // A volume set while held (`setVolume` skips a stream that is not ready) reaches the stream now.
        if let volumePercent { setVolume(percent: volumePercent) }
        switch cause {
        case .corkRequest: log("uncorked: resuming")
        case .mutedAtOpen: log("unmuted: resuming")
        case .suspendedSink: log("sink \(currentSinkName) resumed: resuming")
        }
        signal()
    }

    /// `corked by the sound server (request-cork)`, `sink 'usb' suspended`: for the log and `status`.
    func describe(_ cause: HoldCause) -> String {
        switch cause {
        case .corkRequest: "corked by the sound server (\(PA_STREAM_EVENT_REQUEST_CORK))"
        case .mutedAtOpen: "opened muted by the sound server (a cork request the stream missed)"
        case .suspendedSink: "sink \(currentSinkName) suspended"
        }
    }

    /// `'usb'`: the sink the stream plays on, quoted.
    private var currentSinkName: String {
        let device = stream.flatMap { pa_stream_get_device_name($0) }.map { String(cString: $0) }
        return "'\(device ?? configuration.sinkName ?? "?")'"
    }

    /// Forgets the stream's interruptions with the stream.
    func resetHold() {
        corkRequested = false
        mutedAtOpen = false
        mutedAtOpenChecked = nil
        sinkSuspended = false
        streamCorked = false
        heldBy = nil
    }
}

// MARK: C callbacks

let onStreamEvent: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, OpaquePointer?, UnsafeMutableRawPointer?) -> Void = {
    _, name, _, userdata in
    guard let name else { return }
    player(userdata).streamEvent(String(cString: name))
}

let onStreamSuspended: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { _, userdata in
    player(userdata).streamSuspendedDidChange()
}

let onSinkInputInfo: @convention(c) (OpaquePointer?, UnsafePointer<pa_sink_input_info>?, Int32, UnsafeMutableRawPointer?) -> Void = {
    _, info, _, userdata in
    guard let info else { return }
    player(userdata).sinkInput(info.pointee.index, isMuted: info.pointee.mute != 0)
}

let onStreamMoved: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { _, userdata in
    player(userdata).streamDidMove()
}
