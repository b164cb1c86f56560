# strata's checks. `make test` is what CI runs (after .ci/deps installs
# memcached, libmemcached-tools, nutcracker, etcd-server, chromium and prometheus).

GO         ?= go
STATICCHECK ?= $(shell command -v staticcheck 2>/dev/null || echo $$($(GO) env GOPATH)/bin/staticcheck)
FUZZTIME   ?= 40000x
PROMTOOL   ?= promtool

.PHONY: test verify unit allocs fuzz deps bench

test: deps verify unit fuzz

deps:
	@bash .ci/deps

verify:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...
	$(GO) mod tidy -diff
	$(PROMTOOL) check rules deploy/prometheus/strata-rules.yml
	cd deploy/prometheus && $(PROMTOOL) test rules strata-rules_test.yml
	$(PROMTOOL) check config --syntax-only deploy/prometheus/scrape-example.yml

unit: allocs
	$(GO) test -race -count=1 -timeout 20m ./...

# The zero-allocation tests skip under the race detector, whose
# instrumentation allocates, so they get a pass of their own without it.
# Every test whose name holds "Alloc" runs; a skip among them fails the
# step, so none can quietly stop running.
allocs:
	@out=$$($(GO) test -count=1 -run 'Alloc' -v ./proxy/... ./sampler/... ./tiers/... ./control/locality/... 2>&1); status=$$?; \
	echo "$$out" | grep -E '^(--- |ok|FAIL)' | grep -v 'no tests to run'; \
	if [ $$status -ne 0 ]; then echo "$$out" | tail -40; exit $$status; fi; \
	if echo "$$out" | grep -q -- '--- SKIP'; then echo "an allocation test skipped"; exit 1; fi; \
	n=$$(echo "$$out" | grep -c -- '--- PASS'); echo "allocation tests passed: $$n"; \
	if [ $$n -lt 10 ]; then echo "expected at least 10 allocation tests, ran $$n"; exit 1; fi

# A short coverage-guided run of the wire parsers, and of the allocator on
# decoded problems, on top of their seed corpora. Minimising a new input is capped so a short run keeps fuzzing.
# Fuzz budgets are execution counts (Nx), not durations: with a duration, Go's
# fuzz coordinator before 1.27 can report its own deadline as a failure when a
# loaded machine keeps a worker busy at the end (golang/go#75804). Counts are
# about five seconds of fuzzing each on two cores (FUZZTIME: the protocol parser).
fuzz:
	$(GO) test -run='^$$' -fuzz='^FuzzParse$$' -fuzztime=$(FUZZTIME) -fuzzminimizetime=3s ./proxy/protocol
	$(GO) test -run='^$$' -fuzz='^FuzzReplyParser$$' -fuzztime=200000x -fuzzminimizetime=3s ./tiers/memcached/metacodec
	$(GO) test -run='^$$' -fuzz='^FuzzParse$$' -fuzztime=100000x -fuzzminimizetime=3s ./tiers/locality/linkproto
	$(GO) test -run='^$$' -fuzz='^FuzzParseStatsConns$$' -fuzztime=15000x -fuzzminimizetime=3s ./tiers/memcached
	$(GO) test -run='^$$' -fuzz='^FuzzReply$$' -fuzztime=12000x -fuzzminimizetime=3s ./bench/locality
	$(GO) test -run='^$$' -fuzz='^FuzzStatsBytes$$' -fuzztime=8000x -fuzzminimizetime=3s ./bench/locality
	$(GO) test -run='^$$' -fuzz='^FuzzDecodeVersioned$$' -fuzztime=100000x -fuzzminimizetime=3s ./control/store
	$(GO) test -run='^$$' -fuzz='^FuzzDecodeMark$$' -fuzztime=3000x -fuzzminimizetime=3s ./control/hotmarks
	$(GO) test -run='^$$' -fuzz='^FuzzSolve$$' -fuzztime=15000x -fuzzminimizetime=3s ./placement
	$(GO) test -run='^$$' -fuzz='^FuzzParseCount$$' -fuzztime=20000x -fuzzminimizetime=3s ./tiers/hotkeys
	$(GO) test -run='^$$' -fuzz='^FuzzDetector$$' -fuzztime=100000x -fuzzminimizetime=3s ./tiers/hotkeys/heavy
	$(GO) test -run='^$$' -fuzz='^FuzzMatch$$' -fuzztime=120000x -fuzzminimizetime=3s ./tiers/locality/keyrule
	$(GO) test -run='^$$' -fuzz='^FuzzDecode$$' -fuzztime=12000x -fuzzminimizetime=3s ./control/locality/loctable
	$(GO) test -run='^$$' -fuzz='^FuzzDecodeJournal$$' -fuzztime=12000x -fuzzminimizetime=3s ./control/locality/loctable
	$(GO) test -run='^$$' -fuzz='^FuzzDecodeBatch$$' -fuzztime=6000x -fuzzminimizetime=3s ./control/locality/locsvc
	$(GO) test -run='^$$' -fuzz='^FuzzDecodeCapacity$$' -fuzztime=6000x -fuzzminimizetime=3s ./control/locality/locsvc
	$(GO) test -run='^$$' -fuzz='^FuzzDecodeOutcome$$' -fuzztime=6000x -fuzzminimizetime=3s ./control/locality/locsvc
	$(GO) test -run='^$$' -fuzz='^FuzzCrossOrigin$$' -fuzztime=6000x -fuzzminimizetime=3s ./control/admin
	$(GO) test -run='^$$' -fuzz='^FuzzMatchPath$$' -fuzztime=15000x -fuzzminimizetime=3s ./control/admin
	$(GO) test -run='^$$' -fuzz='^FuzzInvalidUTF8Field$$' -fuzztime=20000x -fuzzminimizetime=3s ./control/admin
	$(GO) test -run='^$$' -fuzz='^FuzzDecode$$' -fuzztime=20000x -fuzzminimizetime=3s ./control/shards
	$(GO) test -run='^$$' -fuzz='^FuzzLocalityConfig$$' -fuzztime=3000x -fuzzminimizetime=3s ./config
	$(GO) test -run='^$$' -fuzz='^FuzzBinary$$' -fuzztime=40000x -fuzzminimizetime=3s ./proxy/protocol
	$(GO) test -run='^$$' -fuzz='^FuzzAuth$$' -fuzztime=20000x -fuzzminimizetime=3s ./proxy/protocol
	$(GO) test -run='^$$' -fuzz='^FuzzParseUsers$$' -fuzztime=10000x -fuzzminimizetime=3s ./proxy/auth
	$(GO) test -run='^$$' -fuzz='^FuzzLoadSnapshot$$' -fuzztime=5000x -fuzzminimizetime=3s ./tiers/embedded
	$(GO) test -run='^$$' -fuzz='^FuzzParseServer$$' -fuzztime=20000x -fuzzminimizetime=3s ./tiers/memcached
	$(GO) test -run='^$$' -fuzz='^FuzzDecode$$' -fuzztime=20000x -fuzzminimizetime=3s ./internal/handoff
	$(GO) test -run='^$$' -fuzz='^FuzzStorageEnd$$' -fuzztime=10000x -fuzzminimizetime=3s ./internal/tlsconn
	$(GO) test -run='^$$' -fuzz='^FuzzHashMD5$$' -fuzztime=200000x -fuzzminimizetime=3s ./tiers/memcached/compat
	$(GO) test -run='^$$' -fuzz='^FuzzMD5Words$$' -fuzztime=100000x -fuzzminimizetime=3s ./tiers/memcached/compat
	$(GO) test -run='^$$' -fuzz='^FuzzParkResume$$' -fuzztime=20000x -fuzzminimizetime=3s ./proxy/protocol
	$(GO) test -run='^$$' -fuzz='^FuzzTwemproxy$$' -fuzztime=3000x -fuzzminimizetime=3s ./config/confimport
	$(GO) test -run='^$$' -fuzz='^FuzzMcrouter$$' -fuzztime=3000x -fuzzminimizetime=3s ./config/confimport
	$(GO) test -run='^$$' -fuzz='^FuzzCheckBounds$$' -fuzztime=50000x -fuzzminimizetime=3s ./internal/tomlpos

bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...
