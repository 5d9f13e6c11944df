"""What the claims of He, Pan, Chen, Yang (ICML 2025) measure on trained models
and prompt batches (private: its public names are exported by the package)."""
