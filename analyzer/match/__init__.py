"""Match: who sends to whom (configurations, links, transports), the primary's exchanges matched with the
standby's link by link, each write split into its components, clock offsets and one-way delays."""
