from django.urls import path

from shop import views

urlpatterns = [
    path("sessions/<int:session_id>/reserve", views.reserve_seat),
    path("sessions/<int:session_id>/waitlist", views.join_waitlist),
    path("rooms/<int:room_id>/reserve", views.reserve_stay),
    path("bookings/<int:booking_id>/confirm", views.confirm),
    path("bookings/<int:booking_id>", views.booking_detail),
]
