# CRAN ggmlR's Vulkan probes. This package computes on the CPU only (no
# Vulkan backend is built), so the answers are those CRAN's package gives
# when it was built without Vulkan: code that asks first then takes the CPU.

ggml_vulkan_available <- function() FALSE
ggml_vulkan_device_count <- function() 0L
