/// Telling others (systemd's status line, the activity feed's `status` events) that the queue or what is
/// speaking may have changed, without polling: the board calls `changed` after each such change, outside its
/// lock.
extension AnnouncementBoard {
    /// Adds someone to tell when what waits or speaks may have changed (there may be several: systemd's
    /// notifier, the activity feed). Observers run on the thread that changed it (a listener's, the spool
    /// writer's, the speaker's): they must be quick, and may read `snapshot`.
    public func addObserver(_ observer: @escaping @Sendable () -> Void) {
        state.withLock { $0.observers.append(observer) }
    }

    /// `addObserver`, under its former name: it adds, and replaces no observer added before.
    public func setObserver(_ observer: @escaping @Sendable () -> Void) {
        addObserver(observer)
    }

    func changed() {
        for observer in state.withLock({ $0.observers }) { observer() }
    }
}
