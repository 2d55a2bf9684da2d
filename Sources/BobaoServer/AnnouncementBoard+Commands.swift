import BobaoCore

/// The board's commands: `cancel`, `skip` and `clear`, and running one after the submissions before it.
extension AnnouncementBoard {
    /// Runs `body` once every submission made before this call has been stored and queued (or refused):
    /// a command then sees every announcement acknowledged before it. At once without a spool; with one, on
    /// the spool writer's thread, the one thread that may write the spool (`StreamVolume` stores there).
    public func afterPendingSubmissions(_ body: @escaping @Sendable () -> Void) {
        guard let writer else { return body() }
        writer.submit(.after(body))
    }

    /// `cancel`: takes the waiting message with this client key (or, failing that, this number) out of the
    /// queue, or stops it if it is speaking. Returns the reply.
    public func cancel(_ target: ClientCommand.Target) -> Result<String, LineProtocol.Refusal> {
        if case .all = target {
            let cleared = clear(reason: "cancelled by a client (cancel all)")
            let skipped = interruptSpeaking(reason: "cancelled by a client (cancel all)")
            return .success("OK cancelled \(cleared + (skipped == nil ? 0 : 1))\n")
        }
        guard case .id(let key) = target else { return .failure(.badField("id", "missing")) }
        let number = UInt64(key)
        let (removed, speaking) = state.withLock { state -> ([Announcement], (UInt64, @Sendable (UInt64, Interruption) -> Void)?) in
            var removed = state.queue.remove { $0.options.clientID == key }
            if removed.isEmpty, let number { removed = state.queue.remove { $0.id == number && $0.options.clientID == nil } }
            // Asked even when already interrupted: a cancellation overrides a cut-in (not said again).
            guard removed.isEmpty, let current = state.speaking,
                  current.options.clientID == key || (current.options.clientID == nil && current.id == number),
                  let interrupter = state.interrupter else { return (removed, nil) }
            state.speakingInterrupted = true
            state.speakingCancelled = "cancelled by a client"
            return (removed, (current.id, interrupter))
        }
        let reason = "cancelled by a client"
        if let (number, interrupter) = speaking {
            log("cancelling #\(number) while it speaks (\(reason))")
            interrupter(number, .cancelled(reason: reason))
            return .success("OK cancelled #\(number)\n")
        }
        guard !removed.isEmpty else {
            return .failure(.notFound(id: key))
        }
        for announcement in removed {
            log("cancelled #\(announcement.id) \(EventLog.quote(announcement.text)) (\(reason)); not spoken")
            finish(announcement, .cancelled(reason: reason))
        }
        return .success("OK cancelled " + removed.map { "#\($0.id)" }.joined(separator: " ") + "\n")
    }

    /// `skip`: stops the announcement speaking now; the next one follows.
    public func skip() -> String {
        guard let number = interruptSpeaking(reason: "skipped by a client") else { return "OK nothing is speaking\n" }
        return "OK skipped #\(number)\n"
    }

    /// `clear`: cancels everything waiting (not the one speaking). Returns the reply.
    public func clear() -> String {
        "OK cleared \(clear(reason: "cleared by a client"))\n"
    }

    func clear(reason: String) -> Int {
        let removed = state.withLock { $0.queue.removeAll() }
        if !removed.isEmpty { log("cleared \(removed.count) waiting announcement(s) (\(reason)); not spoken") }
        for announcement in removed { finish(announcement, .cancelled(reason: reason)) }
        return removed.count
    }

    /// Asks the speaker to stop what it says; returns its number, or nil when nothing speaks.
    func interruptSpeaking(reason: String) -> UInt64? {
        let target = state.withLock { state -> (UInt64, @Sendable (UInt64, Interruption) -> Void)? in
            guard let current = state.speaking, let interrupter = state.interrupter else { return nil }
            state.speakingInterrupted = true
            state.speakingCancelled = reason
            return (current.id, interrupter)
        }
        guard let (number, interrupter) = target else { return nil }
        log("stopping #\(number) while it speaks (\(reason))")
        interrupter(number, .cancelled(reason: reason))
        return number
    }
}
