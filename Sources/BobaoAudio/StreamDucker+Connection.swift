import BobaoCore
import CPulse
import Glibc

// The ducker's own connection: connect, learn the server, its clients and sinks, follow their events, and
// reconnect quietly with a backoff when the server goes away. Main loop lock held throughout.
extension StreamDucker {
    func connect() {
        guard !stopping else { return }
        let properties = pa_proplist_new()
        defer { pa_proplist_free(properties) }
        pa_proplist_sets(properties, PA_PROP_APPLICATION_NAME, "Bobao ducking")
        pa_proplist_sets(properties, PA_PROP_APPLICATION_ID, Self.applicationID)
        guard let context = pa_context_new_with_proplist(api, "Bobao ducking", properties) else {
            return scheduleReconnect()
        }
        self.context = context
        pa_context_set_state_callback(context, onDuckerContextState, userdata)
        pa_context_set_subscribe_callback(context, onDuckerEvent, userdata)
        if pa_context_connect(context, configuration.serverAddress, PA_CONTEXT_NOAUTOSPAWN, nil) < 0 {
            connectionLost()
        }
    }

    func contextStateDidChange() {
        guard let context else { return }
        switch pa_context_get_state(context) {
        case PA_CONTEXT_READY:
            reconnectDelay = configuration.reconnectInitialMilliseconds
            let mask = PA_SUBSCRIPTION_MASK_SINK_INPUT.rawValue | PA_SUBSCRIPTION_MASK_CLIENT.rawValue
                | PA_SUBSCRIPTION_MASK_SINK.rawValue | PA_SUBSCRIPTION_MASK_SERVER.rawValue
            release(pa_context_subscribe(context, pa_subscription_mask_t(mask), nil, nil))
            release(pa_context_get_server_info(context, onDuckerServerInfo, userdata))
        case PA_CONTEXT_FAILED, PA_CONTEXT_TERMINATED:
            connectionLost()
        default:
            break
        }
    }

    func release(_ operation: OpaquePointer?) {
        if let operation { pa_operation_unref(operation) }
    }

    /// The server's name and default sink: the first answer after connecting starts the rest of the set-up
    /// (Bobao's clients, the sink, then the leftovers' check); later ones follow a changed default sink.
    func serverInfoArrived(_ info: pa_server_info) {
        guard let context else { return }
        func text(_ pointer: UnsafePointer<CChar>?) -> String { pointer.map { String(cString: $0) } ?? "?" }
        defaultSink = info.default_sink_name.map { String(cString: $0) }
        resolveNamedSink()
        guard server == nil else { return }
        server = "\(text(info.server_name)) \(text(info.server_version)) on \(text(info.host_name)), cookie "
            + String(info.cookie, radix: 16)
        release(pa_context_get_client_info_list(context, onDuckerClientInfo, userdata))
        // Answered after the clients and the sink (one connection answers in order).
        release(pa_context_get_sink_input_info_list(context, onDuckerReconcileInfo, userdata))
    }

    /// Finds the index of the sink named by `--sink`, or the default sink.
    func resolveNamedSink() {
        guard let context, let name = configuration.sinkName ?? defaultSink else { return }
        release(pa_context_get_sink_info_by_name(context, name, onDuckerSinkInfo, userdata))
    }

    func sinkInfoArrived(_ info: UnsafePointer<pa_sink_info>?, end: Int32) {
        if let info { namedSink = info.pointee.index } else if end < 0 { namedSink = nil }
    }

    func clientInfoArrived(_ info: pa_client_info) {
        let id = pa_proplist_gets(info.proplist, PA_PROP_APPLICATION_ID).map { String(cString: $0) }
        let process = pa_proplist_gets(info.proplist, PA_PROP_APPLICATION_PROCESS_ID).map { String(cString: $0) }
        if process == ownProcess { ownClients.insert(info.index) }
        if id == Self.applicationID || process == ownProcess { bobaoClients.insert(info.index) }
    }

    /// A subscription event: sink inputs are looked at again (new ones may need lowering, lowered ones may
    /// have moved, been changed by someone else, or gone); clients, sinks and the server refresh what is known.
    func eventArrived(_ type: pa_subscription_event_type_t, index: UInt32) {
        guard let context, server != nil else { return }
        let facility = type.rawValue & PA_SUBSCRIPTION_EVENT_FACILITY_MASK.rawValue
        let removed = type.rawValue & PA_SUBSCRIPTION_EVENT_TYPE_MASK.rawValue == PA_SUBSCRIPTION_EVENT_REMOVE.rawValue
        switch facility {
        case PA_SUBSCRIPTION_EVENT_SINK_INPUT.rawValue:
            if removed {
                streamRemoved(index)
            } else {
                release(pa_context_get_sink_input_info(context, index, onDuckerStreamInfo, userdata))
            }
        case PA_SUBSCRIPTION_EVENT_CLIENT.rawValue:
            if removed {
                bobaoClients.remove(index)
                ownClients.remove(index)
            } else {
                release(pa_context_get_client_info(context, index, onDuckerClientInfo, userdata))
            }
        case PA_SUBSCRIPTION_EVENT_SERVER.rawValue:
            release(pa_context_get_server_info(context, onDuckerServerInfo, userdata))
        case PA_SUBSCRIPTION_EVENT_SINK.rawValue:
            resolveNamedSink()
        default:
            break
        }
    }

    /// The connection failed or the server went away: whatever was lowered goes back to the leftovers, to
    /// be checked (and restored) when a server answers again. Nothing is logged: the player says when the
    /// sound server is gone.
    func connectionLost() {
        guard !stopping, reconnectTimer == nil else { return }
        leftovers += tracked.values.map(\.record)
        tracked = [:]
        additions = [:]
        listing = false
        ready = false
        goal = .restored
        server = nil
        bobaoClients = []
        ownClients = []
        ownStream = nil
        ownSink = nil
        namedSink = nil
        for timer in [releaseTimer, rampTimer].compactMap({ $0 }) { api.pointee.time_free(timer) }
        releaseTimer = nil
        rampTimer = nil
        scheduleReconnect()
    }

    func scheduleReconnect() {
        guard !stopping else { return }
        let delay = reconnectDelay
        reconnectDelay = min(delay * 2, configuration.reconnectMaximumMilliseconds)
        var when = timeval()
        pa_timeval_add(pa_gettimeofday(&when), pa_usec_t(delay) * 1000)
        reconnectTimer = api.pointee.time_new(api, &when, onDuckerReconnect, userdata)
    }

    /// The old context is released here, never in its own callbacks.
    func reconnectTimerFired() {
        if let reconnectTimer { api.pointee.time_free(reconnectTimer) }
        reconnectTimer = nil
        dropContext()
        connect()
    }

    func tearDownConnection() {
        cancelTimers()
        dropContext()
        ready = false
    }

    func dropContext() {
        guard let context else { return }
        pa_context_set_state_callback(context, nil, nil)
        pa_context_set_subscribe_callback(context, nil, nil)
        pa_context_disconnect(context)
        pa_context_unref(context)
        self.context = nil
    }

    /// Whether a callback's context is the current one (an answer to a dropped connection is ignored).
    func isCurrent(_ context: OpaquePointer?) -> Bool { context != nil && context == self.context }
}

// MARK: C callbacks of the connection.

let onDuckerContextState: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { context, userdata in
    let ducker = ducker(userdata)
    if ducker.isCurrent(context) { ducker.contextStateDidChange() }
}

let onDuckerEvent: @convention(c) (
    OpaquePointer?, pa_subscription_event_type_t, UInt32, UnsafeMutableRawPointer?
) -> Void = { context, type, index, userdata in
    let ducker = ducker(userdata)
    if ducker.isCurrent(context) { ducker.eventArrived(type, index: index) }
}

let onDuckerServerInfo: @convention(c) (
    OpaquePointer?, UnsafePointer<pa_server_info>?, UnsafeMutableRawPointer?
) -> Void = { context, info, userdata in
    let ducker = ducker(userdata)
    if ducker.isCurrent(context), let info { ducker.serverInfoArrived(info.pointee) }
}

let onDuckerSinkInfo: @convention(c) (
    OpaquePointer?, UnsafePointer<pa_sink_info>?, Int32, UnsafeMutableRawPointer?
) -> Void = { context, info, end, userdata in
    let ducker = ducker(userdata)
    if ducker.isCurrent(context) { ducker.sinkInfoArrived(info, end: end) }
}

let onDuckerClientInfo: @convention(c) (
    OpaquePointer?, UnsafePointer<pa_client_info>?, Int32, UnsafeMutableRawPointer?
) -> Void = { context, info, _, userdata in
    let ducker = ducker(userdata)
    if ducker.isCurrent(context), let info { ducker.clientInfoArrived(info.pointee) }
}

let onDuckerReconnect: @convention(c) (
    UnsafeMutablePointer<pa_mainloop_api>?, OpaquePointer?, UnsafePointer<timeval>?, UnsafeMutableRawPointer?
) -> Void = { _, _, _, userdata in
    ducker(userdata).reconnectTimerFired()
}
