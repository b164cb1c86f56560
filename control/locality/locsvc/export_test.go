package locsvc

// ShipNow ships the counts at once, for tests that must know which
// accesses one batch holds.
func (s *Service) ShipNow() { s.ship() }
