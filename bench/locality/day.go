package locality

import (
	"math/rand/v2"
	"strconv"
)

// Day is the simulated day's workload, a pure function of the user, the
// time of day (a fraction in [0,1)) and a random source: who is served
// from which region, and what each request is.
//
// Users 0..U-1 live in region 0 (A), U..2U-1 in region 1 (B), and so on.
// The odd users of A are travellers: during B's peak, [PeakStart,
// PeakEnd), they are served from B. Everyone else is served from home all
// day. A client in a region draws its requests from the users served there
// now; with probability Foreign the request is instead a read of any user
// (someone elsewhere looking at that user's data).
type Day struct {
	Regions   int     // at least 2
	Users     int     // per region
	Fields    int     // keys per user
	PeakStart float64 // B's peak, as fractions of the day
	PeakEnd   float64
	ReadRatio float64 // reads ÷ (reads + writes) of a user's own requests
	Foreign   float64 // fraction of requests that read a random user
}

// Request is one request a client makes.
type Request struct {
	User    int
	Field   int
	Write   bool
	Foreign bool
}

// Key is the request's memcached key; the hash tag names the user's
// μ-shard ("u: <user>").
func (r Request) Key() string {
	return "u:{" + strconv.Itoa(r.User) + "}:f" + strconv.Itoa(r.Field)
}

// Home is the region user lives in.
func (d Day) Home(user int) int { return user / d.Users }

// Travels reports whether user is one of A's users served from B at B's
// peak.
func (d Day) Travels(user int) bool { return d.Home(user) == 0 && user%2 == 1 }

// Peak reports whether phase lies in B's peak.
func (d Day) Peak(phase float64) bool { return phase >= d.PeakStart && phase < d.PeakEnd }

// Where is the region user is served from at phase.
func (d Day) Where(user int, phase float64) int {
	if d.Travels(user) && d.Peak(phase) {
		return 1
	}
	return d.Home(user)
}

// Present is how many users region serves at phase.
func (d Day) Present(region int, phase float64) int {
	travellers := d.Users / 2
	switch {
	case !d.Peak(phase):
		return d.Users
	case region == 0:
		return d.Users - travellers
	case region == 1:
		return d.Users + travellers
	}
	return d.Users
}

// Next draws the next request of a client in region at phase. The users
// served from region are drawn uniformly: region's own users minus the
// travellers while they are away, plus A's travellers at B during B's
// peak.
func (d Day) Next(rng *rand.Rand, region int, phase float64) Request {
	var r Request
	if d.Foreign > 0 && rng.Float64() < d.Foreign {
		r.User = rng.IntN(d.Regions * d.Users)
		r.Foreign = true
	} else {
		r.User = d.pick(rng.IntN(d.Present(region, phase)), region, phase)
		r.Write = rng.Float64() >= d.ReadRatio
	}
	r.Field = rng.IntN(d.Fields)
	return r
}

// pick maps i in [0, Present(region, phase)) to the i-th user served from
// region at phase.
func (d Day) pick(i, region int, phase float64) int {
	if !d.Peak(phase) || region > 1 {
		return region*d.Users + i
	}
	if region == 0 { // the even users of A stay
		return 2 * i
	}
	if i < d.Users { // B's own users, then A's travellers
		return d.Users + i
	}
	return 2*(i-d.Users) + 1
}

// maxWindows is the number of phases, hence of steady windows.
const maxWindows = 3

// Phases are the day's three parts: before, during and after B's peak.
// A placement that reacts to the shift is judged at steady state, from
// settle after each boundary to the next.
func (d Day) Phases() [maxWindows][2]float64 {
	return [maxWindows][2]float64{{0, d.PeakStart}, {d.PeakStart, d.PeakEnd}, {d.PeakEnd, 1}}
}
