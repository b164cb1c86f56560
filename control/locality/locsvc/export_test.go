package locsvc

// ShipNow ships the counts at once, for tests that must know which
// accesses one batch holds.
func (s *Service) ShipNow() { s.ship() }

// ReportCapacityNow runs one interval's capacity report at once, for
// tests that must know what each interval writes.
func (s *Service) ReportCapacityNow() { s.reportCapacity() }
