from django.urls import path

from web.views import tokens as views

app_name = "access"

urlpatterns = [
    path("tokens/", views.token_list, name="tokens"),
    path("tokens/<str:token_key>/revoke", views.token_revoke, name="token_revoke"),
]
