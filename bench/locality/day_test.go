package locality

import (
	"math/rand/v2"
	"testing"
)

func testDay() Day {
	return Day{Regions: 3, Users: 10, Fields: 4, PeakStart: 0.3, PeakEnd: 0.7, ReadRatio: 0.8, Foreign: 0.02}
}

// Half of A's users are served from B during B's peak and nobody else
// moves.
func TestDayWhere(t *testing.T) {
	d := testDay()
	for _, c := range []struct {
		user  int
		phase float64
		want  int
	}{
		{1, 0.1, 0}, {1, 0.3, 1}, {1, 0.69, 1}, {1, 0.7, 0},
		{2, 0.5, 0}, {10, 0.5, 1}, {25, 0.5, 2}, {11, 0.5, 1},
	} {
		if got := d.Where(c.user, c.phase); got != c.want {
			t.Errorf("Where(%d, %v) = %d, want %d", c.user, c.phase, got, c.want)
		}
	}
	if a, b, c := d.Present(0, 0.5), d.Present(1, 0.5), d.Present(2, 0.5); a != 5 || b != 15 || c != 10 {
		t.Errorf("present at the peak: %d %d %d, want 5 15 10", a, b, c)
	}
}

// Every region's clients draw only users served there (foreign reads
// apart), every such user is drawn, and the read share is ReadRatio.
func TestDayNext(t *testing.T) {
	d := testDay()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, phase := range []float64{0.1, 0.5, 0.9} {
		for region := range d.Regions {
			seen := map[int]bool{}
			own, reads, foreign := 0, 0, 0
			const n = 20000
			for range n {
				r := d.Next(rng, region, phase)
				if r.Field < 0 || r.Field >= d.Fields {
					t.Fatalf("field %d", r.Field)
				}
				if r.Foreign {
					foreign++
					if r.Write {
						t.Fatalf("a foreign request writes: %+v", r)
					}
					continue
				}
				own++
				if w := d.Where(r.User, phase); w != region {
					t.Fatalf("region %d at %v drew user %d, served from %d", region, phase, r.User, w)
				}
				seen[r.User] = true
				if !r.Write {
					reads++
				}
			}
			if len(seen) != d.Present(region, phase) {
				t.Errorf("region %d at %v drew %d users, %d are served there", region, phase, len(seen), d.Present(region, phase))
			}
			if f := float64(reads) / float64(own); f < 0.78 || f > 0.82 {
				t.Errorf("read share %.3f, want 0.8", f)
			}
			if f := float64(foreign) / n; f < 0.015 || f > 0.025 {
				t.Errorf("foreign share %.3f, want 0.02", f)
			}
		}
	}
}

// The same seed draws the same requests.
func TestDayDeterministic(t *testing.T) {
	d := testDay()
	a, b := rand.New(rand.NewPCG(7, 7)), rand.New(rand.NewPCG(7, 7))
	for i := range 1000 {
		if x, y := d.Next(a, i%3, float64(i)/1000), d.Next(b, i%3, float64(i)/1000); x != y {
			t.Fatalf("draw %d: %+v != %+v", i, x, y)
		}
	}
}

func TestRequestKey(t *testing.T) {
	if k := (Request{User: 42, Field: 3}).Key(); k != "u:{42}:f3" {
		t.Errorf("key %q", k)
	}
}
