# strata's checks. `make test` is what CI runs (after .ci/deps installs
# memcached, libmemcached-tools and nutcracker).

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

# A short coverage-guided run of the wire parsers on top of their seed
# corpora. Minimising a new input is capped so a short run keeps fuzzing.
fuzz:
	$(GO) test -run='^$$' -fuzz='^FuzzParse$$' -fuzztime=$(FUZZTIME) -fuzzminimizetime=3s ./proxy/protocol
	$(GO) test -run='^$$' -fuzz='^FuzzReplyParser$$' -fuzztime=10s -fuzzminimizetime=3s ./tiers/memcached/metacodec
	$(GO) test -run='^$$' -fuzz='^FuzzParseCount$$' -fuzztime=10s -fuzzminimizetime=3s ./tiers/hotkeys
	$(GO) test -run='^$$' -fuzz='^FuzzDetector$$' -fuzztime=10s -fuzzminimizetime=3s ./tiers/hotkeys/heavy

bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...
