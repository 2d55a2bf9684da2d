/// Telling someone else (systemd's status line) that the queue or what is speaking may have changed, without
/// polling: the board calls `changed` after each such change, outside its lock.
extension AnnouncementBoard {
    /// Tells the board whom to tell when what waits or speaks may have changed. The observer runs on the
    /// thread that changed it (a listener's, the spool writer's, the speaker's): it must be quick, and may
    /// read `snapshot`.
    public func setObserver(_ observer: @escaping @Sendable () -> Void) {
        state.withLock { $0.observer = observer }
    }

    func changed() {
        state.withLock { $0.observer }?()
    }
}
