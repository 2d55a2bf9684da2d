import BobaoCore
import CPulse

// The connection's life: connect, open the stream once its sink is there (KeepAlivePlayer+Sinks.swift), notice
// loss, reconnect with backoff. Every function here runs with the main loop lock held (C callbacks run on the
// main loop thread).
extension KeepAlivePlayer {
    func connect() {
        guard !stopping else { return }
        let properties = pa_proplist_new()
        defer { pa_proplist_free(properties) }
        pa_proplist_sets(properties, PA_PROP_APPLICATION_NAME, configuration.applicationName)
        pa_proplist_sets(properties, PA_PROP_APPLICATION_ID, "org.bobao.Bobao")
        guard let context = pa_context_new_with_proplist(
            pa_threaded_mainloop_get_api(mainloop), configuration.applicationName, properties) else {
            scheduleReconnect(reason: "could not create a PulseAudio context")
            return
        }
        self.context = context
        pa_context_set_state_callback(context, onContextStateChanged, userdata)
        if pa_context_connect(context, configuration.serverAddress, PA_CONTEXT_NOAUTOSPAWN, nil) < 0 {
            connectionLost(reason: "sound server unavailable (\(String(cString: pa_strerror(pa_context_errno(context)))))")
        }
    }

    func contextStateDidChange() {
        guard let context else { return }
        switch pa_context_get_state(context) {
        case PA_CONTEXT_READY:
            // During an outage (a missing sink fails after every connection) the fault's summaries say it.
            if !outage.isActive {
                let server = pa_context_get_server(context).map { String(cString: $0) } ?? "?"
                log("sound server connected: \(server)")
            }
            subscribeToSinkEvents()
            listSinks()  // opens the stream once the sink is there
        case PA_CONTEXT_FAILED, PA_CONTEXT_TERMINATED:
            guard !stopping else { return }
            let reason = String(cString: pa_strerror(pa_context_errno(context)))
            connectionLost(reason: "sound server unavailable (\(reason))")
        default:
            break
        }
    }

    func openStream() {
        guard let context else { return }
        var spec = pa_sample_spec(format: PA_SAMPLE_S16LE, rate: UInt32(configuration.sampleRate), channels: 1)
        let properties = pa_proplist_new()
        defer { pa_proplist_free(properties) }
        pa_proplist_sets(properties, PA_PROP_MEDIA_ROLE, configuration.mediaRole)
        pa_proplist_sets(properties, PA_PROP_MEDIA_NAME, "announcements")
        // module-stream-restore keeps a stream's volume under its role ("sink-input-by-media-role:event") unless
        // told otherwise: `bobao volume` would then change every event sound on a desktop. Bobao's own entry.
        pa_proplist_sets(properties, "module-stream-restore.id", "sink-input-by-application-id:org.bobao.Bobao")
        pa_proplist_sets(properties, PA_PROP_APPLICATION_NAME, configuration.applicationName)
        guard let stream = pa_stream_new_with_proplist(context, "announcements", &spec, nil, properties) else {
            connectionLost(reason: "could not create a playback stream: \(String(cString: pa_strerror(pa_context_errno(context))))")
            return
        }
        self.stream = stream
        resetHold()
        pa_stream_set_state_callback(stream, onStreamStateChanged, userdata)
        pa_stream_set_write_callback(stream, onStreamWantsData, userdata)
        pa_stream_set_event_callback(stream, onStreamEvent, userdata)
        pa_stream_set_suspended_callback(stream, onStreamSuspended, userdata)
        pa_stream_set_moved_callback(stream, onStreamMoved, userdata)
        var attributes = bufferAttributes(milliseconds: configuration.idleBufferMilliseconds)
        speechBuffered = false
        cancelIdleBuffer()
        // A named sink's stream must not wander to another sink when that one goes: it fails, and waits for it.
        let dontMove = configuration.sinkName == nil ? 0 : PA_STREAM_DONT_MOVE.rawValue
        let flags = pa_stream_flags_t(PA_STREAM_ADJUST_LATENCY.rawValue | dontMove)
        var volume = streamVolume
        let opened = volumePercent == nil
            ? pa_stream_connect_playback(stream, configuration.sinkName, &attributes, flags, nil, nil)
            : pa_stream_connect_playback(stream, configuration.sinkName, &attributes, flags, &volume, nil)
        if opened < 0 {
            connectionLost(reason: "could not open a playback stream: \(String(cString: pa_strerror(pa_context_errno(context))))")
        }
    }

    func streamStateDidChange() {
        guard let stream else { return }
        switch pa_stream_get_state(stream) {
        case PA_STREAM_READY:
            streamReady = true
            streamOpen = true
            reconnectDelay = configuration.reconnectInitialMilliseconds
            let sink = pa_stream_get_device_name(stream).map { String(cString: $0) } ?? "?"
            let attributes = pa_stream_get_buffer_attr(stream)?.pointee
            let buffered = Int(attributes?.tlength ?? 0) * 1000 / configuration.bytesPerSecond
            let serverBack = outage.resolved(), sinkBack = sinkOutage.resolved()
            let back = serverBack.map { "; back \($0)" } ?? sinkBack.map { "; the sink appeared \($0)" } ?? ""
            log("keep-alive stream \(everConnected ? "reopened" : "open") on sink \(sink) (\(buffered) ms of silence queued)\(back)")
            everConnected = true
            // Given at connect too, but pipewire-pulse (0.3.65) leaves a new stream at 100 %: set it again.
            if let volumePercent { setVolume(percent: volumePercent) }
            signal()
            streamSuspendedDidChange()  // opened on a suspended sink: held until it runs
            checkMuted()  // opened muted: a cork request it missed (KeepAlivePlayer+Corking.swift)
        case PA_STREAM_FAILED, PA_STREAM_TERMINATED:
            guard !stopping else { return }
            let reason = context.map { String(cString: pa_strerror(pa_context_errno($0))) } ?? "unknown"
            let sink = configuration.sinkName.map { "sink '\($0)'" } ?? "the default sink"
            let failure = "playback stream on \(sink) failed (\(reason))"
            // The server is still there: the stream alone is lost (its sink went away, most likely).
            if let context, reconnectTimer == nil, pa_context_get_state(context) == PA_CONTEXT_READY {
                streamLost(reason: failure)
            } else {
                connectionLost(reason: failure)
            }
        default:
            break
        }
    }

    func streamWantsData(bytes: Int) {
        guard let stream else { return }
        if mode == .silence {
            writeSilence(stream, bytes: bytes)
        } else {
            signal()  // wake the speech writer
        }
    }

    /// The stream or the server went away: cut any utterance and try again later. The old stream and
    /// context are released by the reconnect timer, never here: this may run inside their own callbacks
    /// (even inside pa_context_connect), where freeing them is not allowed.
    func connectionLost(reason: String) {
        streamClosedWhileIdle = false
        cancelPlayedOutTimer()
        cancelTimingUpdate()
        streamReady = false
        mode = .silence
        guard reconnectTimer == nil else { return }  // already lost; the stream's failure follows the context's
        generation += 1
        scheduleReconnect(reason: reason)
        signal()
    }

    func tearDownConnection() {
        cancelIdleClose()
        cancelIdleBuffer()
        streamClosedWhileIdle = false
        cancelPlayedOutTimer()
        cancelTimingUpdate()
        streamReady = false
        releaseStream()
        dropSinkWatch()
        dropContext()
        if let reconnectTimer {
            pa_threaded_mainloop_get_api(mainloop).pointee.time_free(reconnectTimer)
            self.reconnectTimer = nil
        }
    }

    /// Disconnects and releases the stream, its callbacks first. Allowed inside the stream's own callbacks:
    /// libpulse holds a reference of its own around them.
    func releaseStream() {
        guard let stream else { return }
        pa_stream_set_state_callback(stream, nil, nil)
        pa_stream_set_write_callback(stream, nil, nil)
        pa_stream_set_event_callback(stream, nil, nil)
        pa_stream_set_suspended_callback(stream, nil, nil)
        pa_stream_set_moved_callback(stream, nil, nil)
        if PA_STREAM_IS_GOOD(pa_stream_get_state(stream)) != 0 { pa_stream_disconnect(stream) }
        pa_stream_unref(stream)
        self.stream = nil
        streamOpen = false
        resetHold()
    }

    func dropContext() {
        guard let context else { return }
        pa_context_set_state_callback(context, nil, nil)
        pa_context_set_subscribe_callback(context, nil, nil)
        pa_context_disconnect(context)
        pa_context_unref(context)
        self.context = nil
    }

    func scheduleReconnect(reason: String) {
        guard !stopping else { return }
        let delay = reconnectDelay
        lastError = reason
        // Logged as it happens at first (the backoff growing), then only in summaries: a sound server or
        // sink that stays away must not write a line every 2 s for days.
        if let line = outage.occurred("\(reason); retrying in \(delay) ms") { log(LogPriority.warning + line) }
        reconnectDelay = min(delay * 2, configuration.reconnectMaximumMilliseconds)
        var when = timeval()
        pa_timeval_add(pa_gettimeofday(&when), pa_usec_t(delay) * 1000)
        reconnectTimer = pa_threaded_mainloop_get_api(mainloop).pointee.time_new(
            pa_threaded_mainloop_get_api(mainloop), &when, onReconnectTimerFired, userdata)
    }

    func reconnectTimerDidFire() {
        tearDownConnection()  // frees the timer too
        connect()
    }
}

// MARK: C callbacks: each finds its player through `userdata`, which the player keeps valid while registered.

func player(_ userdata: UnsafeMutableRawPointer?) -> KeepAlivePlayer {
    Unmanaged<KeepAlivePlayer>.fromOpaque(userdata!).takeUnretainedValue()
}

let onContextStateChanged: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { _, userdata in
    player(userdata).contextStateDidChange()
}

let onStreamStateChanged: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { _, userdata in
    player(userdata).streamStateDidChange()
}

let onStreamWantsData: @convention(c) (OpaquePointer?, Int, UnsafeMutableRawPointer?) -> Void = { _, bytes, userdata in
    player(userdata).streamWantsData(bytes: bytes)
}

let onTimingUpdated: @convention(c) (OpaquePointer?, Int32, UnsafeMutableRawPointer?) -> Void = { stream, success, userdata in
    var latency: pa_usec_t = 0
    var negative: Int32 = 0
    if success == 0 || stream == nil || pa_stream_get_latency(stream, &latency, &negative) != 0 || negative != 0 {
        latency = 0
    }
    player(userdata).finishEnding(latency: latency)
}

let onUtterancePlayedOut: @convention(c) (
    UnsafeMutablePointer<pa_mainloop_api>?, OpaquePointer?, UnsafePointer<timeval>?, UnsafeMutableRawPointer?
) -> Void = { api, event, _, userdata in
    api?.pointee.time_free(event)
    let player = player(userdata)
    player.playedOutTimer = nil
    player.markPlayed()
}

let onReconnectTimerFired: @convention(c) (
    UnsafeMutablePointer<pa_mainloop_api>?, OpaquePointer?, UnsafePointer<timeval>?, UnsafeMutableRawPointer?
) -> Void = { _, _, _, userdata in
    player(userdata).reconnectTimerDidFire()
}
