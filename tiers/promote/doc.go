// Package promote decides whether an L2 hit is copied into L1.
//
// The rule is the long-tail paper's: promote with probability 1/N, where N is
// the threshold of the key's family. A key read k times from L2 has been
// promoted with probability 1 − (1 − 1/N)^k, so hot keys reach L1 within a
// few dozen reads while the long tail, read once or twice, almost never
// does. The decision is a pure function of the key and a random number the
// caller draws, so tests can assert exact counts.
package promote
