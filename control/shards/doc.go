// Package shards is the shard-assignment loop of the control plane: the
// agent in every strata and the leader of each managed tier, around the
// pure decisions of placement/assign.
//
// Data flow, for one tier T (store rows in keys.go):
//
//  1. Every strata runs an Agent for T. It watches T's versioned map row
//     and applies each newer version to its pool (never an older one:
//     store.VersionWatch and the pool both refuse to go back), and every
//     ReportInterval writes a Report on its session lease: the version it
//     applied, the servers its pool holds down and its per-shard request
//     and byte rates. A dead strata's row vanishes with its lease, so the
//     leader stops waiting for it.
//  2. One process per tier leads (the election shards-T): any strata serve
//     or a strata control. Its Runner probes every member each
//     ProbeInterval (on a connection kept per member) and runs
//     Leader.Round with the time and the probe outcomes; a watch of the
//     tier's rows tells the round when it must read them again (an idle
//     tier's rows do not change).
//  3. A Round reads the map, the reports and the operator's drain intents;
//     declares servers dead (own probe failing for Detection and half the
//     agents agreeing), returning (answers again) and back up (flushed,
//     once every agent applied the map that took its shards and reaches
//     it); then either fails over (emergency mode: every orphan placed in
//     one publication, with no phases, since a dead server has nothing to
//     hand off; a batch in flight goes on without the moves that touched
//     it), advances the batch of moves in flight, or plans a new batch in
//     periodic mode. It publishes at most one version, fenced on the
//     leadership, so a deposed leader cannot publish. The decision is
//     the pure decideRound over what the round read, the time, the
//     detector's verdicts and the flushes made; Round is the shell that
//     reads, flushes the servers readyToFlush names, and publishes.
//
// Settings: Config holds the loop's knobs shared by every tier, with
// DefaultConfig and Validate (a *FieldError per refused field); a tier's
// AgentConfig, LeaderConfig and RunnerConfig take their values from it.
//
// A batch of moves walks the data plane's phases (Published.Topology hands
// them to the pools as shardmap moves, tiers/memcached carries them out):
// Prepare (the owner is still the source) until every live agent applied
// it; Handoff (the destination owns and fills from the source) for the
// Grace window and until every live agent applied it; Settle (no more
// fills, writes still delete at the source) until every live agent
// applied it and for at least SettleHold, the pools' fill lease TTL; then
// Final. Waiting on applied versions is what keeps any two proxies at
// most one phase apart on any move; a proxy that never applies holds the
// moves (its lease ending releases it). Each move keeps its own phase and
// clock: while a server waits to be emptied (draining) or filled, a new
// batch starts beside the moves in flight, within MaxMovesPerServer moves
// in prepare or handoff into each server, so the grace windows of
// successive batches overlap and a drain takes about one grace window and
// one settle hold. A map whose moves share a phase is written as before
// moves had their own (Published.Phase alone). A move from or to a server
// a maintenance walk has (shards/T/maintenance/ADDR, written by the admin
// API's walk from before the drain to after the return) holds its
// handoff for MaintenanceGrace instead: the walk keeps its source up, and
// a rolling restart moves each server's shards twice, so a longer window
// carries more of the keys read. The mark is read every round and
// changes nothing but that window's length.
//
// Data never returns to a server while its copies could be stale: the map
// records, per server, the shards it handed off since its last flush
// (Published.Former); no periodic move brings one of them back, and a
// failover uses such a server for an orphan only when no other can take
// it. A server back from down, new to the list or undrained once empty is
// flushed (and its record emptied) before it owns anything. Each time a
// member loses its shards so (down, undrained once empty, new to the list)
// it gets a new incarnation, the version of that map; the pools flush a
// member once per incarnation, so one whose watch skipped the returning
// map still empties it before routing to it.
//
// Conversion (convert.go): a tier whose pools start on a compat layout
// (LeaderConfig.Compat) publishes first a map with every shard on the
// layout (Published.Layout), then converts MaxMoves of them per batch as
// moves from FromLayout, whose source the pools take per key from the
// layout; the handoff lasts ConvertGrace. The operator's pause
// (shards/T/convert-paused) stops new batches, not the one in flight.
// Shards on the layout take no replicas and no balancing moves (a plan
// only retargets them). A conversion between two layouts
// (LeaderConfig.ToLayout) walks the same batches; its owners are names
// only, so it gets no balancing moves or replicas at all, and a
// conversion past prepare is never undone.
//
// Shard scaling (replicas.go): every Rebalance period the leader sums the
// agents' per-shard read rates and lets assign.Replicas move each shard's
// replica count one step within ReplicaBand, up to MaxReplicas. A replica
// walks joining → serving → leaving → gone, each step once every live
// agent applied the map in force; a removed replica is recorded in
// Former like a move's source, so it is never a replica or owner of the
// shard again before a flush. A shard with replicas never moves, and a
// failover turns its replicas leaving.
//
// State and leadership: everything a decision needs across rounds is in
// the published map (members' states, the version that declared a member
// down, the former owners, the batch and its phase), so the next leader
// continues from the last published version. What a Leader keeps in memory (failure streaks,
// when a phase began, the last periodic round) only delays a new leader's
// decisions.
//
// Goroutines: an Agent owns two (watch, report), a Runner one (campaign
// and rounds), while it leads one more (the watch of the tier's rows,
// joined when the leadership ends), plus short-lived probe goroutines
// joined within a round.
// Both stop with Stop(ctx). View (the admin API's shard calls) starts
// none: it reads and writes the store on the caller's goroutine.
//
// Composition: a process builds one Plane over its managed tiers and a
// store client of its own (NewPlane owns it): an Agent for each tier with
// a pool in the process, a Runner for each tier when the process leads.
// Plane.Start starts the agents, then the runners; Plane.Stop ends the
// runners first (they resign, so a standby leads at once), then the agents
// (their leases revoked), then closes the store client.
package shards
