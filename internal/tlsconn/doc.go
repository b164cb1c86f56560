// Package tlsconn runs TLS on connections an event loop owns (gnet cannot
// run TLS on its sockets): the handshake runs on a goroutine over the
// socket, then the socket goes to the loop and crypto/tls processes the
// records there, over buffers, never blocking. The data path: the loop
// reads ciphertext, lends it to Decrypt, reads the plaintext with Peek and
// Discard, seals replies with Encrypt and sends Out.
//
// Usage contract:
//
//  1. Accept or dial the socket; call Server or Client on a goroutine of
//     your own (the handshake blocks, bounded by its timeout; crypto/tls
//     cannot resume a handshake that would block, so it cannot run on the
//     loop). A failure closes the socket; Reason classifies it.
//  2. Register the socket with the loop, carrying the Conn. From then on
//     the loop alone calls the Conn's methods, and the handshaking
//     goroutine must not touch either.
//  3. On the connection's first callback, process what the Conn may
//     already hold: ciphertext read during the handshake (a TLS 1.3 client
//     may send its first request with its Finished) sits inside crypto/tls
//     and no socket event announces it. Wake the connection once.
//  4. On every callback: Decrypt the inbound ciphertext up to a plaintext
//     limit and discard, from the inbound buffer, exactly the bytes it
//     took. While Held, call Decrypt again once the plaintext drained, even
//     if no bytes arrived.
//  5. After Encrypt, and after every Decrypt (crypto/tls may answer by
//     itself), send Out and call Sent.
//  6. Err ends the connection: io.EOF is the peer's close_notify.
//
// Buffers: the slice passed to Decrypt is only read during the call
// (crypto/tls copies what it takes). Peek's slice is valid until the next
// Decrypt or Discard; Out's until Sent.
//
// Why this design (measured, docs/tls.md, BenchmarkRoundTrip): a 100-byte
// get round trip over loopback costs 19.5 µs plain, 21.6 µs with records
// on the loop and 31.9 µs through a bridge of two goroutines and a socket
// pair per connection (kept in bridge_test.go as the baseline); at depth
// 16, 1.44, 1.64 and 2.01 µs per request. The allocations left are
// crypto/tls's own: one small object (24 B) each time a Read reaches the
// transport, two per callback, shared by every request it carries. Kernel
// TLS was not an option on the machine measured (no tls upper-layer
// protocol in tcp_available_ulp).
//
// Certificates (Store) are read from files and replaced by Reload without
// touching open sessions: new handshakes read the current material
// through tls.Config.GetConfigForClient; a file refused is a *FileError
// naming which (cert, key, CA). Counts tallies handshakes by reason for
// each side that runs them (client listener, links, pools).
package tlsconn
