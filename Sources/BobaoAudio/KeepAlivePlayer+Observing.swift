// Telling others (systemd's status line, the activity feed's `status` events) that what `status` reports may
// have changed, without polling: the properties `status` reads call `observe` from their `didSet`, with the
// main loop lock held.
extension KeepAlivePlayer {
    /// Adds someone to tell when the player's state, sink or last error may have changed (there may be several:
    /// systemd's notifier, the activity feed). Each observer runs with the main loop lock held, on whatever
    /// thread changed the state: it must be quick and must not call the player (it may note the change and
    /// read `status` later, from another thread). Any thread.
    public func addStateObserver(_ observer: @escaping @Sendable () -> Void) {
        withLoopLock { stateObservers.append(observer) }
    }

    /// `addStateObserver`, under its former name: it adds, and replaces no observer added before.
    public func setStateObserver(_ observer: @escaping @Sendable () -> Void) {
        addStateObserver(observer)
    }

    /// A `didSet`'s old and new value: the observers hear of a change only.
    func observe<Value: Equatable>(_ old: Value, _ new: Value) {
        if old != new { notifyStateObservers() }
    }

    /// Tells every observer. Main loop lock held.
    func notifyStateObservers() {
        for observer in stateObservers { observer() }
    }
}
