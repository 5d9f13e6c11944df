"""What the claims of Chen, Zhao, Zou (NeurIPS 2024) measure on trained models
and prompt batches (private: its public names are exported by the package)."""
