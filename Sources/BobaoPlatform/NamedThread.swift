import CPlatformSupport
#if canImport(Glibc)
import Glibc
#endif

/// Starts `body` on a new detached POSIX thread called `name` (as `top -H` and debuggers show it).
///
/// Bobao's long-lived threads (the eSpeak engine, the speaker, the listener) are plain pthreads: the
/// Foundation `Thread` class would pull all of Foundation and ICU into the server's memory.
public func startThread(name: String, _ body: @escaping @Sendable () -> Void) {
    final class Box: Sendable {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
    let box = Unmanaged.passRetained(Box(name: name, body: body)).toOpaque()
    var thread = pthread_t()
    let status = pthread_create(&thread, nil, { argument in
        let box = Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue()
        _ = bobao_name_current_thread(String(box.name.prefix(15)))  // the kernel keeps 15 bytes
        box.body()
        return nil
    }, box)
    precondition(status == 0, "pthread_create failed: \(status)")
    pthread_detach(thread)
}
