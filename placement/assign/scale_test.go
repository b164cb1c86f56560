package assign

import "testing"

func TestReplicasFollowTheBand(t *testing.T) {
	band := Band{Low: 100, High: 400}
	cases := []struct {
		name  string
		reads float64
		cur   int
		want  int
	}{
		{"cold stays single", 50, 1, 1},
		{"hot gains one", 401, 1, 2},
		{"inside the band stays", 600, 2, 2},
		{"hotter gains one more", 900, 2, 3},
		{"at the cap stays", 5000, 4, 4},
		{"just split does not shrink back", 401, 2, 2},
		{"cooled loses one", 200, 3, 2},
		{"cold loses down to one", 90, 2, 1},
		{"never below one", 0, 1, 1},
		{"a count above the cap is clamped", 10, 9, 3},
	}
	for _, c := range cases {
		got, err := Replicas([]float64{c.reads}, []int{c.cur}, band, 4)
		if err != nil {
			t.Fatal(err)
		}
		if got[0] != c.want {
			t.Errorf("%s: %v reads on %d replicas -> %d, want %d", c.name, c.reads, c.cur, got[0], c.want)
		}
	}
	if _, err := Replicas(nil, nil, Band{Low: 300, High: 400}, 4); err != ErrBand {
		t.Fatalf("a band that flaps: %v", err)
	}
	// Repeated calls on a stable load converge and then stay.
	r := []int{1}
	for i := 0; i < 10; i++ {
		r, _ = Replicas([]float64{1500}, r, band, 8)
	}
	if r[0] != 4 {
		t.Fatalf("1500 reads/s with high 400 settled on %d replicas, want 4", r[0])
	}
}
