package proxy

import (
	"errors"
	"testing"
)

func TestCheckNamesTheField(t *testing.T) {
	if err := (Config{Loops: MaxLoops, MaxInflight: MaxInflightLimit, MaxOutboundBytes: MinOutboundBytes}).Check(); err != nil {
		t.Fatalf("the bounds themselves: %v", err)
	}
	for field, c := range map[string]Config{
		"Loops":            {Loops: MaxLoops + 1},
		"MaxInflight":      {MaxInflight: MaxInflightLimit + 1},
		"MaxOutboundBytes": {MaxOutboundBytes: MinOutboundBytes - 1},
	} {
		var fe *FieldError
		if err := c.Check(); !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%s out of range: %v", field, err)
		}
	}
	if err := (Config{Loops: -1}).Check(); err == nil {
		t.Error("negative loops accepted")
	}
}
