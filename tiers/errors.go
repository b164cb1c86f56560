package tiers

// ClientError is a Result.Err for a request the tier refuses because of
// what the client asked (for example a CAS on a split counter). The proxy
// answers "CLIENT_ERROR <text>" rather than SERVER_ERROR, and the client
// should not retry it unchanged.
type ClientError string

func (e ClientError) Error() string { return string(e) }
