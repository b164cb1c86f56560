package shards

// The store layout of one tier T:
//
//	shards/T/map            versioned row: Published (leader, fenced)
//	shards/T/agents/<id>    Report of one strata, on its session lease
//	shards/T/drain/<addr>   operator intent: drain addr (admin API)
//	shards/T/maintenance/<addr> a maintenance walk has addr (admin API)
//	shards/T/convert-paused operator intent: pause the compat conversion
//	election shards-T       the tier's leader election

func tierPrefix(tier string) string     { return "shards/" + tier + "/" }
func mapKey(tier string) string         { return "shards/" + tier + "/map" }
func agentsPrefix(tier string) string   { return "shards/" + tier + "/agents/" }
func drainPrefix(tier string) string    { return "shards/" + tier + "/drain/" }
func drainKey(tier, addr string) string { return drainPrefix(tier) + addr }
func maintPrefix(tier string) string    { return "shards/" + tier + "/maintenance/" }
func maintKey(tier, addr string) string { return maintPrefix(tier) + addr }
func pausedKey(tier string) string      { return "shards/" + tier + "/convert-paused" }

// ElectionName is the name of tier's leader election.
func ElectionName(tier string) string { return "shards-" + tier }
