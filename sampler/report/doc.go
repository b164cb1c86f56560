// Package report turns sampled accesses into the numbers the long-tail
// cache design is tuned with: per key family and overall, the accesses and
// unique keys, the working-set size of every cluster and of the region, the
// duplication factor, hotness, tier hit ratios and the promotion model's
// predictions for candidate thresholds N, with a recommended N.
//
// Records flow one way: an Aggregator takes entries (from sample log files
// via FromFiles, or from the sampler's live buffer) and Report computes a
// Report from its state; WriteText, WriteJSON and WriteHTML render it. The
// computation is pure: no clock, no randomness, no goroutines; the same
// records in any order give the same Report. Run is `strata report`, the
// same pipeline over files named on the command line.
//
// # Definitions
//
// Sampling keeps every access of a key chosen by hash with probability
// 1/rate, so each sampled key stands for rate keys. A key's weight w is the
// sample_rate of its newest record. Scaled figures multiply by w per key:
//
//	accesses          Σ_keys w · (accesses of the key)
//	unique_keys       Σ_keys w
//	size(key)         key_size + value size, the value size being the newest non-zero
//	                  value_size of the key anywhere in the region (a miss or a delete
//	                  reports 0 and does not erase it); ties in time take the larger
//	cluster WSS(c)    Σ over keys accessed from cluster c of w · size(key)
//	region WSS        Σ over keys accessed from any cluster of w · size(key)
//	duplication       Σ_c cluster WSS(c) ÷ region WSS; between 1 and the number of clusters,
//	                  because every key has one size in all clusters
//	hotness CDF       over the sampled keys, by accesses per key (region-wide, all ops):
//	                  the share of keys with at most a accesses and the share of
//	                  accesses they make; per-key counts need no scaling
//	hot10 share       the share of accesses made by the hottest 10 % of keys (by weight;
//	                  a key straddling the boundary counts in proportion)
//	h1                L1 hits ÷ reads; h2 = L2 hits ÷ (reads − L1 hits);
//	                  combined = h1 + (1 − h1)·h2
//
// Reads are get records; the other ops count as accesses but not in hit
// ratios or the promotion model.
//
// # Promotion model and the recommended N
//
// L1 is per cluster, so the model works per (cluster, key) pair with k =
// the pair's reads in the window. For each candidate N (8, 16, 32, 64, 128):
//
//	L1 footprint(c)   Σ_keys w · size(key) · P(N, k), P(N, k) = 1 − (1 − 1/N)^k
//	L1 hits           Σ_pairs w · (k − N·P(N, k))  (reads after the promoting one)
//	L1 traffic share  L1 hits ÷ reads
//
// The recommended N of a family is, among the candidates whose largest
// per-cluster footprint fits the budget, the one with the most predicted L1
// hits (the smallest such N, since hits and footprint both fall as N grows).
// The budget is per family and per cluster: an absolute number of bytes, or
// a fraction of the family's region WSS (default 10 %, the paper's "thin
// L1"). If no candidate fits, the largest N is recommended and over_budget
// is set. A family without reads has no recommendation (0).
//
// The observed promotion rate is promotions ÷ L2 hits; its inverse is the N
// the strata ran with. It is checked against the model by comparing the
// share of (cluster, key) pairs with L2 hits that were promoted with the
// model's 1 − (1 − rate)^t over those pairs' L2-hit counts t.
//
// # JSON
//
// WriteJSON emits the Report type; field names are stable and only ever
// added to. Top level: window, window_start, window_end, sample_rate,
// mixed_sample_rates, records, skipped_lines, budget, clusters (a list of
// {name, cluster, region, accesses, unique_keys, wss_bytes, hit_ratio}),
// overall and families (Family objects: family, accesses, reads,
// unique_keys, sampled_accesses, sampled_keys, cluster_wss_bytes (cluster →
// bytes), cluster_unique_keys, region_wss_bytes, duplication_factor,
// hot10_traffic_share, hit_ratio {l1, l2, combined}, hotness {p50, p90,
// p99, max, cdf}, promotion {…, predictions}, recommended_threshold),
// promotion_model (a list of {threshold, trials, probability} for N in 8,
// 16, 32, 64, 128 and trials 1 to 200) and warnings. Ratios are fractions
// in [0, 1], sizes are bytes.
package report
