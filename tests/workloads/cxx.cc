// SPDX-License-Identifier: MIT
/*
 * cxx: C++ names that must come out exactly, and apart -- a namespace, a
 * class template at two types, two overloads, a member function:
 *
 *   work <- shapes::twice(int) <- shapes::Box<int>::open(int) <- main
 *   work <- shapes::twice(double) <- shapes::Box<double>::open(double) <- main
 *   work <- shapes::twice(int) <- shapes::Box<int>::open(int)
 *        <- shapes::Widget::poke(char const*) <- main
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
	return 0;
}
