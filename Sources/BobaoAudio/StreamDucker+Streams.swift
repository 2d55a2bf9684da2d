import BobaoCore
import CPulse
import Glibc

// Which streams are lowered, the ramps, the release and the leftovers' check. Main loop lock held throughout.
extension StreamDucker {
    /// The sink Bobao plays on: its own stream's, else the one `--sink` or the default names.
    var targetSink: UInt32? { ownSink ?? namedSink }

    /// Speech began: lower every other stream on the sink. Speech that resumes within the release delay
    /// keeps what is lowered, as it is.
    func beginDuck() {
        let wasDucked = goal == .ducked
        if let releaseTimer { api.pointee.time_free(releaseTimer) }
        releaseTimer = nil
        guard !wasDucked, configuration.factor < 1, ready, let context, !stopping else { return }
        goal = .ducked
        cycle = Cycle()
        guard !listing else { return }
        listing = true
        release(pa_context_get_sink_input_info_list(context, onDuckerDuckListing, userdata))
    }

    /// The duck's listing is complete: save what will be lowered, then ramp everything down.
    func duckListingEnded() {
        listing = false
        defer {
            additions = [:]
            additionSinks = [:]
        }
        guard goal == .ducked else { return }
        let room = max(0, configuration.maximumStreams - tracked.count)
        let sorted = additions.keys.filter { additionSinks[$0] == targetSink && tracked[$0] == nil }.sorted()
        if sorted.count > room && !warnedAboutLimit {
            warnedAboutLimit = true
            log("ducking at most \(configuration.maximumStreams) streams; \(sorted.count - room) more left as they are")
        }
        for index in sorted.prefix(room) { tracked[index] = additions[index] }
        save()
        for index in tracked.keys { rampTracked(index, to: tracked[index]!.record.ducked) }
        startRamp()
        if !tracked.isEmpty { log("ducked \(tracked.count) stream(s) to \(configuration.percent)") }
    }

    /// Speech ended: restore after the release delay, unless speech resumes first.
    func armRelease() {
        guard goal == .ducked, !stopping else { return }
        if let releaseTimer { api.pointee.time_free(releaseTimer) }
        releaseTimer = timer(in: configuration.releaseDelayMilliseconds, onDuckerRelease)
        if releaseTimer == nil { beginRestore() }
    }

    func beginRestore() {
        if let releaseTimer { api.pointee.time_free(releaseTimer) }
        releaseTimer = nil
        goal = .restored
        for index in tracked.keys { rampTracked(index, to: tracked[index]!.record.original) }
        if tracked.isEmpty { finishRestore() } else { startRamp() }
    }

    /// Every ramp up has ended: forget the streams (and the file), and say what was done.
    func finishRestore() {
        let restored = tracked.count
        tracked = [:]
        save()
        var notes: [String] = []
        if cycle.joined > 0 { notes.append("\(cycle.joined) lowered when they appeared") }
        if cycle.changed > 0 { notes.append("\(cycle.changed) changed by someone else meanwhile, left as they are") }
        if cycle.movedAway > 0 { notes.append("\(cycle.movedAway) moved to another sink") }
        if cycle.gone > 0 { notes.append("\(cycle.gone) gone") }
        if restored > 0 || !notes.isEmpty {
            log("restored \(restored) stream(s)" + (notes.isEmpty ? "" : " (" + notes.joined(separator: "; ") + ")"))
        }
        cycle = Cycle()
    }

    // MARK: Streams

    /// A sink input's information, from the duck's listing (`listing`) or after one of its events.
    func streamInfoArrived(_ info: pa_sink_input_info, fromListing: Bool) {
        let owner = Self.owner(of: info)
        if isOwn(info) { noteOwnStream(info) }
        guard ready, let server, !stopping else { return }
        let volume = Self.channels(info.volume)
        if let stream = tracked[info.index] {
            let mine = DuckingLedger.same(volume, stream.record.original) || DuckingLedger.isOneOf(volume, stream.history)
            if stream.record.owner != owner {
                tracked[info.index] = nil  // the index was reused for another stream
            } else if info.sink != targetSink {
                if mine { setVolume(info.index, stream.record.original) }
                tracked[info.index] = nil
                cycle.movedAway += 1
            } else if !mine {
                tracked[info.index] = nil
                cycle.changed += 1
            }
            return
        }
        // While a duck's listing is under way, an event's answer was asked before it (answers come in order)
        // and may be stale: the listing has the stream as it is now.
        // A listing's streams are sorted out by sink when it ends, once Bobao's own stream is known.
        guard goal == .ducked, fromListing || !listing, fromListing || info.sink == targetSink,
              info.volume_writable != 0, !isBobao(info), additions[info.index] == nil else { return }
        let ducked = DuckingLedger.ducked(volume, factor: configuration.factor)
        guard !DuckingLedger.same(ducked, volume) else { return }  // silent already
        let record = DuckedStream(index: info.index, server: server, owner: owner, original: volume, ducked: ducked)
        let stream = Tracked(record: record, current: volume)
        if fromListing {
            additionSinks[info.index] = info.sink
            return additions[info.index] = stream
        }
        // Appeared (or moved here) while Bobao speaks: lowered at once, no ramp.
        guard tracked.count < configuration.maximumStreams else { return }
        tracked[info.index] = stream
        save()
        tracked[info.index]!.steps = [ducked]
        startRamp()
        cycle.joined += 1
    }

    func streamRemoved(_ index: UInt32) {
        if index == ownStream {
            ownStream = nil
            ownSink = nil
        }
        if tracked.removeValue(forKey: index) != nil { cycle.gone += 1 }
        additions[index] = nil
    }

    /// Bobao's own stream's information: it names the sink to duck on. When the stream reaches its sink
    /// (PipeWire links it a moment after it opens) or moves while ducked, list again to lower what plays there.
    func noteOwnStream(_ info: pa_sink_input_info) {
        let moved = ownSink != info.sink
        ownStream = info.index
        ownSink = info.sink
        if moved, goal == .ducked, !listing, ready, let context, !stopping {
            listing = true
            release(pa_context_get_sink_input_info_list(context, onDuckerDuckListing, userdata))
        }
    }

    /// Bobao's own stream: of this process.
    func isOwn(_ info: pa_sink_input_info) -> Bool {
        ownClients.contains(info.client) || Self.property(info.proplist, PA_PROP_APPLICATION_PROCESS_ID) == ownProcess
    }

    /// Any Bobao's stream: never lowered.
    func isBobao(_ info: pa_sink_input_info) -> Bool {
        isOwn(info) || bobaoClients.contains(info.client)
            || Self.property(info.proplist, PA_PROP_APPLICATION_ID) == Self.applicationID
    }

    // MARK: Ramps

    func rampTracked(_ index: UInt32, to target: [UInt32]) {
        guard let stream = tracked[index] else { return }
        tracked[index]!.steps = DuckingLedger.same(stream.current, target)
            ? [] : DuckingLedger.ramp(from: stream.current, to: target, steps: configuration.rampSteps)
    }

    /// Takes the first step now, unless a ramp is already under way (its next tick takes it).
    func startRamp() {
        if rampTimer == nil { rampTick() }
    }

    func rampTick() {
        if let rampTimer { api.pointee.time_free(rampTimer) }
        rampTimer = nil
        var more = false
        for index in Array(tracked.keys) where !tracked[index]!.steps.isEmpty {
            let volume = tracked[index]!.steps.removeFirst()
            setVolume(index, volume)
            more = more || !tracked[index]!.steps.isEmpty
        }
        if more { rampTimer = timer(in: configuration.rampStepMilliseconds, onDuckerRampTick) }
        if rampTimer == nil && goal == .restored { finishRestore() }
    }

    /// Sets a stream's volume (and remembers it, when the stream is lowered). With `confirm`, the answer
    /// counts down `stop()`'s wait.
    func setVolume(_ index: UInt32, _ volume: [UInt32], confirm: Bool = false) {
        guard let context else { return }
        if tracked[index] != nil {
            tracked[index]!.current = volume
            tracked[index]!.history.append(volume)
            if tracked[index]!.history.count > 64 { tracked[index]!.history.removeFirst() }
        }
        var levels = Self.cvolume(volume)
        let operation = pa_context_set_sink_input_volume(
            context, index, &levels, confirm ? onDuckerStopVolumeSet : nil, confirm ? userdata : nil)
        if operation == nil && confirm { stopOperationAnswered() }
        release(operation)
    }

    // MARK: Leftovers

    /// One sink input, in the listing that follows each connection: a stream a Bobao lowered and did not
    /// restore (a crash, a lost connection) is restored if it is still the same stream at a volume Bobao set.
    func reconcileInfoArrived(_ info: pa_sink_input_info) {
        let owner = Self.owner(of: info)
        if isOwn(info) { noteOwnStream(info) }
        guard let server, let position = leftovers.firstIndex(where: { $0.index == info.index && $0.server == server })
        else { return }
        let record = leftovers.remove(at: position)
        let volume = Self.channels(info.volume)
        if record.owner == owner, DuckingLedger.isOneOf(volume, DuckingLedger.volumesSet(for: record, rampSteps: configuration.rampSteps)) {
            setVolume(info.index, record.original)
            reconciled.restored += 1
        } else if !DuckingLedger.same(volume, record.original) {
            reconciled.changed += 1
        }
    }

    /// The listing after a connection ended: leftovers not seen are gone; the rest belong to another server.
    /// A listing that failed keeps them (in the store too) for the next connection or start.
    func reconcileEnded(failed: Bool) {
        let (restored, changed) = reconciled
        reconciled = (0, 0)
        ready = true
        var notes: [String] = []
        if !failed {
            let gone = leftovers.filter { $0.server == server }.count, foreign = leftovers.count - gone
            leftovers = []
            if gone > 0 { notes.append("\(gone) gone") }
            if foreign > 0 { notes.append("\(foreign) of another sound server, forgotten") }
        }
        save()
        if changed > 0 { notes.insert("\(changed) changed by someone else meanwhile, left as they are", at: 0) }
        if restored > 0 || !notes.isEmpty {
            log("restored \(restored) stream(s) lowered before an unclean stop or a lost connection"
                + (notes.isEmpty ? "" : " (" + notes.joined(separator: "; ") + ")"))
        }
        if speaking { beginDuck() }
    }

    // MARK: Conversions

    static func channels(_ volume: pa_cvolume) -> [UInt32] {
        var volume = volume
        let count = min(Int(volume.channels), DuckingLedger.maximumChannels)
        return withUnsafeBytes(of: &volume.values) { Array($0.bindMemory(to: UInt32.self).prefix(count)) }
    }

    static func cvolume(_ values: [UInt32]) -> pa_cvolume {
        var volume = pa_cvolume()
        volume.channels = UInt8(min(values.count, DuckingLedger.maximumChannels))
        withUnsafeMutableBytes(of: &volume.values) { raw in
            let slots = raw.bindMemory(to: UInt32.self)
            for (slot, value) in zip(slots.indices, values) { slots[slot] = min(value, DuckingLedger.maximumVolume) }
        }
        return volume
    }

    static func property(_ list: OpaquePointer?, _ key: String) -> String? {
        pa_proplist_gets(list, key).map { String(cString: $0) }
    }

    /// Who owns a stream, for recognising it after a restart: process id, binary and application name.
    static func owner(of info: pa_sink_input_info) -> String {
        [PA_PROP_APPLICATION_PROCESS_ID, PA_PROP_APPLICATION_PROCESS_BINARY, PA_PROP_APPLICATION_NAME]
            .map { property(info.proplist, $0) ?? "" }.joined(separator: " ")
    }
}

// MARK: C callbacks of the streams.

let onDuckerDuckListing: @convention(c) (
    OpaquePointer?, UnsafePointer<pa_sink_input_info>?, Int32, UnsafeMutableRawPointer?
) -> Void = { context, info, end, userdata in
    let ducker = ducker(userdata)
    guard ducker.isCurrent(context) else { return }
    if let info { ducker.streamInfoArrived(info.pointee, fromListing: true) }
    if end != 0 { ducker.duckListingEnded() }
}

let onDuckerStreamInfo: @convention(c) (
    OpaquePointer?, UnsafePointer<pa_sink_input_info>?, Int32, UnsafeMutableRawPointer?
) -> Void = { context, info, _, userdata in
    let ducker = ducker(userdata)
    if ducker.isCurrent(context), let info { ducker.streamInfoArrived(info.pointee, fromListing: false) }
}

let onDuckerReconcileInfo: @convention(c) (
    OpaquePointer?, UnsafePointer<pa_sink_input_info>?, Int32, UnsafeMutableRawPointer?
) -> Void = { context, info, end, userdata in
    let ducker = ducker(userdata)
    guard ducker.isCurrent(context) else { return }
    if let info { ducker.reconcileInfoArrived(info.pointee) }
    if end != 0 { ducker.reconcileEnded(failed: end < 0) }
}

let onDuckerRampTick: @convention(c) (
    UnsafeMutablePointer<pa_mainloop_api>?, OpaquePointer?, UnsafePointer<timeval>?, UnsafeMutableRawPointer?
) -> Void = { _, _, _, userdata in
    ducker(userdata).rampTick()
}

let onDuckerRelease: @convention(c) (
    UnsafeMutablePointer<pa_mainloop_api>?, OpaquePointer?, UnsafePointer<timeval>?, UnsafeMutableRawPointer?
) -> Void = { _, _, _, userdata in
    ducker(userdata).beginRestore()
}

let onDuckerStopVolumeSet: @convention(c) (OpaquePointer?, Int32, UnsafeMutableRawPointer?) -> Void = { _, _, userdata in
    ducker(userdata).stopOperationAnswered()
}
