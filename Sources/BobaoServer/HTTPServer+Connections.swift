import BobaoCore
import BobaoPlatform
import CMicroHTTPD
import Glibc

/// Connections: counted for the metrics, and limited per peer address so that one machine cannot hold every
/// connection the port has (loopback is not limited: the box's own software is trusted, as with the rate).
extension HTTPServer {
    /// Connections one address other than loopback may hold open: an eighth of `--max-connections`, 8 at
    /// least. More are closed as they arrive.
    var perAddressLimit: Int { max(8, settings.maximumConnections / 8) }

    static func socketAddress(_ address: UnsafePointer<sockaddr>) -> SocketAddress {
        var storage = sockaddr_storage()
        let length = address.pointee.sa_family == sa_family_t(AF_INET6)
            ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size
        withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: UnsafeRawBufferPointer(start: address, count: length)) }
        return SocketAddress(storage: storage, length: socklen_t(length))
    }

    /// libmicrohttpd's accept policy: whether a new connection from `address` may be served.
    func admitsConnection(from address: UnsafePointer<sockaddr>) -> Bool {
        let host = Self.socketAddress(address).host
        guard !AddressRange.isLoopback(host) else { return true }
        let open = connectionsByAddress.withLock { $0[host] ?? 0 }
        guard open >= perAddressLimit else { return true }
        noteRefusal(code: "busy", host: host) {
            "refused an HTTP connection from \(host): it has \(open) open already (at most \(perAddressLimit) an address, "
                + "an eighth of --max-connections); the connection was closed"
        }
        return false
    }

    /// A connection opened: counted, and its address kept in its slot for `connectionClosed`.
    func connectionStarted(_ connection: OpaquePointer, slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        services.connectionOpened()
        guard let address = bobao_http_client_address(connection) else { return }
        let host = Self.socketAddress(address).host
        guard !AddressRange.isLoopback(host) else { return }
        connectionsByAddress.withLock { $0[host, default: 0] += 1 }
        slot.pointee = Unmanaged.passRetained(PeerHost(host)).toOpaque()
    }

    func connectionClosed(slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        services.connectionClosed()
        guard let raw = slot.pointee else { return }
        slot.pointee = nil
        let host = Unmanaged<PeerHost>.fromOpaque(raw).takeRetainedValue().host
        connectionsByAddress.withLock { counts in
            let left = (counts[host] ?? 1) - 1
            counts[host] = left > 0 ? left : nil
        }
    }
}

/// A connection's peer address, kept in libmicrohttpd's per-connection slot until it closes.
final class PeerHost {
    let host: String

    init(_ host: String) {
        self.host = host
    }
}
