// Package handoff passes a running strata's listening sockets to its
// successor, so that an upgrade refuses no connection: the sockets stay
// open throughout, and connections that arrive meanwhile wait in the
// kernel's backlog for whichever process accepts next.
//
// The two processes meet on a Unix socket (SOCK_SEQPACKET, one message a
// packet), the [server] handoff_socket. The exchange, each step one
// message (message.go):
//
//  1. The successor connects and sends Hello.
//  2. The running process answers Offer: one Entry per listening socket
//     (its role, its configured and its bound address) and the sockets
//     themselves, in the same order, as SCM_RIGHTS rights. It serves one
//     successor at a time; another is answered Refuse.
//  3. The successor starts serving on the sockets it uses, closes the
//     others, and sends Ready. Until then nothing has changed for the
//     running process: a successor that fails or exits before Ready (its
//     connection closes) leaves it serving as before.
//  4. The running process stops taking successors, answers Done, and
//     reports the takeover (Handoff.Successor); its owner then runs its
//     normal shutdown, which stops accepting by closing its own copies of
//     the sockets (never the shared socket's queue) and drains.
//  5. After Done the successor serves the handoff socket itself (it was
//     handed over as the "handoff" role, so its path never went away).
//  6. The running process keeps the connection open until its shutdown
//     finished (it closes its Handoff last); its end closes Gone in the
//     successor. A successor that must read what its predecessor saves on
//     the way out (a snapshot) can send Ready before it accepts and wait
//     for Gone: connections wait in the backlog meanwhile. strata serve
//     today accepts first (step 3), so that a successor that fails to
//     start leaves the old process serving.
//
// Ownership: Open returns a Handoff whose one goroutine (started by
// Serve) accepts successors; Close stops it and waits. The path is
// unlinked by Close only while this process still owns it, that is, if no
// successor took over.
package handoff
