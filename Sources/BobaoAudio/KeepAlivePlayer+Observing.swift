// Telling someone else (systemd's status line) that what `status` reports may have changed, without polling:
// the properties `status` reads call `observe` from their `didSet`, with the main loop lock held.
extension KeepAlivePlayer {
    /// Tells the player whom to tell when its state, sink or last error may have changed. The observer runs
    /// with the main loop lock held, on whatever thread changed the state: it must be quick and must not call
    /// the player (it may note the change and read `status` later, from another thread). Any thread.
    public func setStateObserver(_ observer: @escaping @Sendable () -> Void) {
        withLoopLock { stateObserver = observer }
    }

    /// A `didSet`'s old and new value: the observer hears of a change only.
    func observe<Value: Equatable>(_ old: Value, _ new: Value) {
        if old != new { stateObserver?() }
    }
}
