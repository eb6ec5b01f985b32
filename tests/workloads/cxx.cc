// SPDX-License-Identifier: MIT
/*
 * cxx: C++ names that must come out exactly, and apart -- a namespace, a
 * class template at two types, two overloads, a member function:
 *
 *   work <- shapes::twice(int) <- shapes::Box<int>::open(int) <- main
 *   work <- shapes::twice(double) <- shapes::Box<double>::open(double) <- main
 *   work <- shapes::twice(int) <- shapes::Box<int>::open(int)
 *        <- shapes::Widget::poke(char const*) <- main
 *
 * and allocates through libstdc++'s operator new, whose first instruction
 * is endbr64 in Debian's build, on two paths that differ only in its
 * caller:
 *
 *   operator new(unsigned long) <- shapes::fresh(int) <- main      once
 *   operator new(unsigned long) <- shapes::fresh(double) <- main   twice
 */
#define NOINLINE __attribute__((noinline))

extern "C" NOINLINE void work(void)
{
	asm volatile("" ::: "memory");
}

namespace shapes {

NOINLINE void twice(int)
{
	work();
}

NOINLINE void twice(double)
{
	work();
}

NOINLINE int *fresh(int v)
{
	return new int(v);
}

NOINLINE double *fresh(double v)
{
	return new double(v);
}

template <typename T> struct Box {
	NOINLINE void open(T v)
	{
		twice(v);
	}
};

class Widget {
public:
	NOINLINE void poke(const char *)
	{
		Box<int>().open(1);
	}
};

} // namespace shapes

int main()
{
	shapes::Box<int>().open(1);
	shapes::Box<double>().open(2.0);
	shapes::Widget().poke("x");
	delete shapes::fresh(1);
	delete shapes::fresh(2.0);
	delete shapes::fresh(3.0);
	return 0;
}
