import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// libpq resolves a host name inside its connect call, blocking, with no
// time limit: a DNS server that does not answer would hold the request's
// queue and its caller for as long as the resolver retries. The client
// resolves the name first, on a thread of its own, under the request's
// time limit and cancellation, and hands libpq the addresses.

extension PostgresClient {
    /// The numeric addresses of `host` (as libpq's `hostaddr` takes them),
    /// or nil when `host` needs no lookup: a socket directory or an
    /// address already.
    /// - Throws: ``ClientFailure/lost(_:)`` when the name does not
    ///   resolve, ``ClientFailure/expired`` when the lookup outlasts
    ///   `deadline` (it is left to finish on its own), or
    ///   ``ClientFailure/cancelled``.
    static func addresses(of host: String, deadline: ContinuousClock.Instant?) async throws -> [String]? {
        guard !host.hasPrefix("/"), !isNumericAddress(host) else { return nil }
        // Never started: whichever of its answer, its time limit and a
        // cancellation comes first resumes the caller.
        let lookup = PendingRequest<[String]?>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard lookup.wait(continuation) else { return }
                DispatchQueue.global().async { lookup.finish(Result { try resolve(host) }) }
                if let deadline {
                    let nanoseconds = max(0, (deadline - ContinuousClock.now).saturatingNanoseconds)
                    DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(nanoseconds))) {
                        lookup.finish(.failure(ClientFailure.expired))
                    }
                }
            }
        } onCancel: {
            lookup.cancel()
        }
    }

    /// Whether `host` is an IPv4 or IPv6 address.
    static func isNumericAddress(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    /// The addresses of `host`, blocking (getaddrinfo), without duplicates,
    /// in the resolver's order.
    private static func resolve(_ host: String) throws -> [String] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0, let first = list else {
            throw ClientFailure.lost(
                "could not resolve host name \"\(host)\": \(String(cString: gai_strerror(status)))"
            )
        }
        defer { freeaddrinfo(first) }
        var addresses: [String] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            if getnameinfo(
                current.pointee.ai_addr,
                current.pointee.ai_addrlen,
                &text,
                socklen_t(text.count),
                nil,
                0,
                NI_NUMERICHOST
            ) == 0 {
                let address = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                if !addresses.contains(address) { addresses.append(address) }
            }
            entry = current.pointee.ai_next
        }
        guard !addresses.isEmpty else { throw ClientFailure.lost("host name \"\(host)\" has no address") }
        return addresses
    }
}
