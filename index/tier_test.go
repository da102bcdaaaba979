package index

import (
	"errors"
	"testing"
)

func TestParseTier(t *testing.T) {
	cases := []struct {
		in      string
		want    Tier
		wantErr bool
	}{
		{"", TierDevice, false},
		{"device", TierDevice, false},
		{"GPU", TierDevice, false},
		{"Host", TierHost, false},
		{"cpu", TierHost, false},
		{"DISK", TierDisk, false},
		{"ssd", 0, true},
		{"gpu ", 0, true},
	}
	for _, tc := range cases {
		got, err := ParseTier(tc.in)
		if tc.wantErr {
			if !errors.Is(err, ErrUnknownTier) {
				t.Errorf("ParseTier(%q) error %v, want ErrUnknownTier", tc.in, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseTier(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if back, _ := ParseTier(got.String()); back != got {
			t.Errorf("String of %v does not parse back", got)
		}
	}
	if s := Tier(7).String(); s != "tier(7)" {
		t.Errorf("out of range tier prints %q", s)
	}
}
