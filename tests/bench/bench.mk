# Benchmarks: speed and memory, measured, never asserted in a test.

$(BUILD)/tests/bench_symbols: tests/bench/bench_symbols.c $(SYMS_SRCS) $(SYMS_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ tests/bench/bench_symbols.c $(SYMS_SRCS) $(SYMS_LIBS)

.PHONY: bench-symbols
bench-symbols: $(BUILD)/tests/bench_symbols
	@$(BUILD)/tests/bench_symbols
