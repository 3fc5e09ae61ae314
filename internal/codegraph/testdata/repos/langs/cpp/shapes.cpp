#include "shapes.hpp"

namespace geo {

double Shape::describe() const {
	return area();
}

double Circle::area() const {
	return 3.14159 * r_ * r_;
}

double total_area(const Shape *shapes[], int n) {
	double sum = 0;
	for (int i = 0; i < n; i++) {
		sum += shapes[i]->area();
	}
	return sum;
}

}  // namespace geo

int main() {
	geo::Circle c(2.0);
	const geo::Shape *all[] = {&c};
	return static_cast<int>(geo::total_area(all, 1));
}
