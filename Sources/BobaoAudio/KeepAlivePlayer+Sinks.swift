import BobaoCore
import CPulse

// Which sink the stream plays on, and waiting for one that is not there.
//
// - The stream is opened only once the sink is among the server's sinks: `--sink NAME`, or without it any sink
//   (the stream then goes to the server's default). A named sink's stream has PA_STREAM_DONT_MOVE: when the
//   sink goes away the stream fails (PulseAudio) or is dropped here (a listing finds the sink gone), rather
//   than wandering to another sink.
// - While the sink is missing, lines are still accepted and announcements wait (the speaker waits for
//   `waitUntilReady`). The player listens to the server's sink and server events and opens the stream as soon
//   as the sink appears (a USB speaker plugged in later). A listing every `sinkRecheckMilliseconds` is only a
//   fallback for a missed event. The warning, which names the sinks there are, is logged once; later checks
//   are summed up by `sinkOutage`.
// - Without `--sink`, the stream follows the server's default sink when it changes. PulseAudio (14 and
//   later) and pipewire-pulse with WirePlumber both move a stream that was not opened on a named device, so
//   the player only logs the move (`streamDidMove`).
//
// Everything here runs with the main loop lock held (C callbacks run on the main loop thread) and never
// blocks it.
extension KeepAlivePlayer {
    /// How often the sinks are listed while the sink is missing, in case an event was missed.
    static let sinkRecheckMilliseconds = 10_000

    /// Asks the server for sink and server events. Called once the context is ready.
    func subscribeToSinkEvents() {
        guard let context else { return }
        pa_context_set_subscribe_callback(context, onContextEvent, userdata)
        let mask = pa_subscription_mask_t(
            PA_SUBSCRIPTION_MASK_SINK.rawValue | PA_SUBSCRIPTION_MASK_SERVER.rawValue | PA_SUBSCRIPTION_MASK_SINK_INPUT.rawValue)
        if let operation = pa_context_subscribe(context, mask, nil, nil) { pa_operation_unref(operation) }
    }

    /// A sink came or went: list them again (to open the stream on one that appeared, or to drop a stream
    /// whose sink went). While a sink is missing, a change of the server's settings (its default sink) does
    /// the same. A sink's own changes (volume, state) are ignored. A change of the stream's own sink input
    /// matters only while it is held for having opened muted (KeepAlivePlayer+Corking.swift).
    func contextEvent(_ event: UInt32, index: UInt32) {
        let facility = event & PA_SUBSCRIPTION_EVENT_FACILITY_MASK.rawValue
        let type = event & PA_SUBSCRIPTION_EVENT_TYPE_MASK.rawValue
        switch facility {
        case PA_SUBSCRIPTION_EVENT_SINK.rawValue where type != PA_SUBSCRIPTION_EVENT_CHANGE.rawValue:
            listSinks()
        case PA_SUBSCRIPTION_EVENT_SERVER.rawValue where awaitingSink:
            listSinks()
        case PA_SUBSCRIPTION_EVENT_SINK_INPUT.rawValue where mutedAtOpen && stream.map(pa_stream_get_index) == index:
            checkMuted()
        default:
            break
        }
    }

    /// Lists the server's sinks; `sinksListed` acts on the answer. One listing at a time: another one asked
    /// for meanwhile runs after it, so an event is never answered from a listing older than it.
    /// - Parameter failure: the stream failure this listing answers (retried if the sink is there).
    func listSinks(afterFailure failure: String? = nil) {
        if let failure { sinkFailure = failure }
        guard let context, pa_context_get_state(context) == PA_CONTEXT_READY else { return }
        guard sinkListing == nil else {
            relistSinks = true
            return
        }
        listedSinks.removeAll(keepingCapacity: true)
        sinkListing = pa_context_get_sink_info_list(context, onSinkListed, userdata)
        if sinkListing == nil { retryStream(after: sinkFailure ?? "could not list the sinks") }
    }

    /// The listing's last answer: act on it, or list again if another listing was asked for meanwhile.
    func sinkListingEnded(succeeded: Bool) {
        if let sinkListing { pa_operation_unref(sinkListing) }
        sinkListing = nil
        if relistSinks {
            relistSinks = false
            return listSinks()
        }
        guard succeeded else { return retryStream(after: sinkFailure ?? "could not list the sinks") }
        sinkNames = listedSinks
        sinksListed()
    }

    /// Opens the stream on a sink that is there, waits for one that is not, drops a stream whose sink went.
    func sinksListed() {
        let failure = sinkFailure
        sinkFailure = nil
        guard sinkIsThere else {
            if stream != nil { return streamLost(reason: missingSinkDescription, sinkGone: true) }
            return awaitSink()
        }
        guard stream == nil else { return }  // playing on it
        if awaitingSink {
            awaitingSink = false
            cancelSinkTimer()
            openStreamUnlessIdle()
        } else if let failure {
            retryStream(after: failure)  // the sink is there, yet the stream failed: back off
        } else if sinkTimer == nil {
            openStreamUnlessIdle()
        }  // else a retry is due: it lists the sinks again
    }

    /// Whether the sink to play on is among those listed.
    var sinkIsThere: Bool {
        guard let sinkNames else { return false }
        return configuration.sinkName.map(sinkNames.contains) ?? !sinkNames.isEmpty
    }

    /// `no sink 'usb' (sinks: a, b)`, or `no sink (the sound server has none)` without `--sink`: for the log,
    /// `status` and the announcements that fail waiting.
    var missingSinkDescription: String {
        let names = sinkNames ?? []
        guard let name = configuration.sinkName else { return "no sink (the sound server has none)" }
        return "no sink '\(name)' (sinks: \(names.isEmpty ? "none" : names.joined(separator: ", ")))"
    }

    /// The sink is missing: say so once (then in summaries), and wait for an event, or the fallback listing.
    func awaitSink() {
        awaitingSink = true
        streamClosedWhileIdle = false
        lastError = missingSinkDescription
        let waiting = configuration.sinkName == nil ? "a sink appears" : "it appears"
        if let line = sinkOutage.occurred("\(missingSinkDescription): lines are still accepted, and announcements wait until \(waiting)") {
            log(LogPriority.warning + line)
        }
        armSinkTimer(milliseconds: Self.sinkRecheckMilliseconds)
        signal()
    }

    /// The stream failed, or its sink went away, while the server is still there. The utterance is cut as a
    /// lost connection cuts it (`generation`: `write` and `waitUntilPlayed` give up, and the speaker says it
    /// again from its start), the stream is dropped, and the sinks decide what next: wait for the sink, or
    /// retry with backoff. Safe inside the stream's own callbacks (libpulse holds a reference around them).
    func streamLost(reason: String, sinkGone: Bool = false) {
        cancelPlayedOutTimer()
        cancelTimingUpdate()
        streamReady = false
        mode = .silence
        generation += 1
        releaseStream()
        lastError = reason
        if sinkGone { awaitSink() } else { listSinks(afterFailure: reason) }
        signal()
    }

    /// A stream failure on a sink that is there: logged as connection failures are, retried after the backoff.
    func retryStream(after failure: String) {
        streamClosedWhileIdle = false
        let delay = reconnectDelay
        lastError = failure
        if let line = outage.occurred("\(failure); retrying in \(delay) ms") { log(LogPriority.warning + line) }
        reconnectDelay = min(delay * 2, configuration.reconnectMaximumMilliseconds)
        armSinkTimer(milliseconds: delay)
    }

    /// Without `--sink` the server moves the stream to its new default sink (or to another one when its sink
    /// goes away); a named sink's stream never moves.
    func streamDidMove() {
        guard let stream else { return }
        let sink = pa_stream_get_device_name(stream).map { String(cString: $0) } ?? "?"
        log("keep-alive stream moved to sink \(sink)")
        notifyStateObservers()  // `status` names the sink
        streamSuspendedDidChange()  // the new sink may be suspended, or not
    }

    func armSinkTimer(milliseconds: Int) {
        cancelSinkTimer()
        guard let context else { return }
        sinkTimer = pa_context_rttime_new(context, pa_rtclock_now() + UInt64(milliseconds) * 1000, onSinkTimerFired, userdata)
    }

    func cancelSinkTimer() {
        guard let sinkTimer else { return }
        pa_threaded_mainloop_get_api(mainloop).pointee.time_free(sinkTimer)
        self.sinkTimer = nil
    }

    /// Forgets the sinks with the context that listed them (the fault's count stays: a sink still missing
    /// after a reconnection is not logged again).
    func dropSinkWatch() {
        cancelSinkTimer()
        if let sinkListing {
            pa_operation_cancel(sinkListing)
            pa_operation_unref(sinkListing)
            self.sinkListing = nil
        }
        relistSinks = false
        sinkFailure = nil
        awaitingSink = false
        sinkNames = nil
    }
}

// MARK: C callbacks

let onContextEvent: @convention(c) (OpaquePointer?, pa_subscription_event_type_t, UInt32, UnsafeMutableRawPointer?) -> Void = {
    _, event, index, userdata in
    player(userdata).contextEvent(event.rawValue, index: index)
}

let onSinkListed: @convention(c) (OpaquePointer?, UnsafePointer<pa_sink_info>?, Int32, UnsafeMutableRawPointer?) -> Void = {
    _, info, last, userdata in
    let player = player(userdata)
    if let name = info?.pointee.name { player.listedSinks.append(String(cString: name)) }
    if last != 0 { player.sinkListingEnded(succeeded: last > 0) }
}

let onSinkTimerFired: @convention(c) (
    UnsafeMutablePointer<pa_mainloop_api>?, OpaquePointer?, UnsafePointer<timeval>?, UnsafeMutableRawPointer?
) -> Void = { api, event, _, userdata in
    api?.pointee.time_free(event)
    let player = player(userdata)
    player.sinkTimer = nil
    player.listSinks()
}
