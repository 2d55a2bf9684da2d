import BobaoPlatform
import Dispatch
import Synchronization

/// One dedicated, named thread that runs submitted jobs in order.
///
/// eSpeak NG keeps one global engine per process that must be used from one thread; every call into it
/// goes through this thread. Callers block until their job has run.
final class EngineThread: Sendable {
    private let jobs = Mutex<[@Sendable () -> Void]>([])
    private let jobArrived = DispatchSemaphore(value: 0)

    init(name: String) {
        startThread(name: name) { [self] in
            while true {
                jobArrived.wait()
                let job = jobs.withLock { $0.removeFirst() }
                job()
            }
        }
    }

    /// Runs `body` on the engine thread and returns its result; the caller waits.
    func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let result = ResultBox<T>()
        jobs.withLock {
            $0.append {
                result.set(Result { try body() })
                done.signal()
            }
        }
        jobArrived.signal()
        done.wait()
        return try result.get()
    }
}

/// Carries a job's result from the engine thread to the waiting caller; the semaphore orders the accesses.
private final class ResultBox<T: Sendable>: @unchecked Sendable {
    private var value: Result<T, any Error>?
    func set(_ result: Result<T, any Error>) { value = result }
    func get() throws -> T { try value!.get() }
}
