# strata's checks. `make test` is what CI runs (after .ci/deps installs
# memcached, libmemcached-tools, nutcracker and etcd-server).

GO         ?= go
STATICCHECK ?= $(shell command -v staticcheck 2>/dev/null || echo $$($(GO) env GOPATH)/bin/staticcheck)
FUZZTIME   ?= 20s

.PHONY: test verify unit fuzz deps bench

test: deps verify unit fuzz

deps:
	@bash .ci/deps

verify:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...
	$(GO) mod tidy -diff

unit:
	$(GO) test -race -count=1 -timeout 20m ./...

# A short coverage-guided run of the wire parsers, and of the allocator on
# decoded problems, on top of their seed corpora. Minimising a new input is capped so a short run keeps fuzzing.
fuzz:
	$(GO) test -run='^$$' -fuzz='^FuzzParse$$' -fuzztime=$(FUZZTIME) -fuzzminimizetime=3s ./proxy/protocol
	$(GO) test -run='^$$' -fuzz='^FuzzReplyParser$$' -fuzztime=10s -fuzzminimizetime=3s ./tiers/memcached/metacodec
	$(GO) test -run='^$$' -fuzz='^FuzzParseStatsConns$$' -fuzztime=5s -fuzzminimizetime=3s ./tiers/memcached
	$(GO) test -run='^$$' -fuzz='^FuzzDecodeVersioned$$' -fuzztime=5s -fuzzminimizetime=3s ./control/store
	$(GO) test -run='^$$' -fuzz='^FuzzSolve$$' -fuzztime=10s -fuzzminimizetime=3s ./placement
	$(GO) test -run='^$$' -fuzz='^FuzzDecode$$' -fuzztime=5s -fuzzminimizetime=3s ./control/shards

bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...
