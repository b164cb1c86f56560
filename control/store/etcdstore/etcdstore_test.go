package etcdstore_test

import (
	"testing"

	"github.com/strata-cache/strata/control/store/etcdstore"
	"github.com/strata-cache/strata/control/store/etcdstore/etcdharness"
	"github.com/strata-cache/strata/control/store/storetest"
	"github.com/strata-cache/strata/internal/etcdtest"
)

// connect dials endpoint directly.
func connect(t *testing.T, endpoint string) *etcdstore.Store {
	return etcdharness.Dial(t, endpoint, etcdstore.Config{})
}

// etcdHarness starts a fresh etcd for the suite.
func etcdHarness(t *testing.T) storetest.Harness {
	return etcdharness.New(t, etcdtest.Start(t), etcdstore.Config{})
}

func TestEtcdStore(t *testing.T) { storetest.Run(t, etcdHarness) }
