# strata's checks. `make test` is what CI runs (after .ci/deps installs
# memcached, libmemcached-tools, nutcracker, chromium and prometheus).

GO         ?= go
STATICCHECK ?= $(shell command -v staticcheck 2>/dev/null || echo $$($(GO) env GOPATH)/bin/staticcheck)
FUZZTIME   ?= 20s
PROMTOOL   ?= promtool

.PHONY: test verify unit fuzz deps bench

test: deps verify unit fuzz

deps:
	@bash .ci/deps

verify:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...
	$(GO) mod tidy -diff
	$(PROMTOOL) check rules deploy/prometheus/strata-rules.yml
	$(PROMTOOL) check config --syntax-only deploy/prometheus/scrape-example.yml

unit:
	$(GO) test -race -count=1 -timeout 20m ./...

# A short coverage-guided run of the wire parsers on top of their seed
# corpora. Minimising a new input is capped so a short run keeps fuzzing.
fuzz:
	$(GO) test -run='^$$' -fuzz='^FuzzParse$$' -fuzztime=$(FUZZTIME) -fuzzminimizetime=3s ./proxy/protocol
	$(GO) test -run='^$$' -fuzz='^FuzzReplyParser$$' -fuzztime=10s -fuzzminimizetime=3s ./tiers/memcached/metacodec
	$(GO) test -run='^$$' -fuzz='^FuzzParseStatsConns$$' -fuzztime=5s -fuzzminimizetime=3s ./tiers/memcached
	$(GO) test -run='^$$' -fuzz='^FuzzCrossOrigin$$' -fuzztime=5s -fuzzminimizetime=3s ./control/admin

bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...
