// Package bayes forecasts what a job will do next: the Dirichlet posterior
// over batch-size regimes and the remaining-runtime forecast of Shockwave
// (Zheng et al., NSDI'23), and the Gittins index over an empirical service
// distribution used by Tiresias (Gu et al., NSDI'19).
package bayes
