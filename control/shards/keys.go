package shards

// The store layout of one tier T:
//
//	shards/T/map            versioned row: Published (leader, fenced)
//	shards/T/agents/<id>    Report of one strata, on its session lease
//	shards/T/drain/<addr>   operator intent: drain addr (admin API)
//	election shards-T       the tier's leader election

func mapKey(tier string) string         { return "shards/" + tier + "/map" }
func agentsPrefix(tier string) string   { return "shards/" + tier + "/agents/" }
func drainPrefix(tier string) string    { return "shards/" + tier + "/drain/" }
func drainKey(tier, addr string) string { return drainPrefix(tier) + addr }

// ElectionName is the name of tier's leader election.
func ElectionName(tier string) string { return "shards-" + tier }
