"""The admin's sign-in door. Everyone signs in on the one sign-in page (allauth's, with its rate
limits and the forge's buttons); a user who is already signed in but may not enter the admin is
told so, rather than shown a sign-in form that would only send them back."""
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache


@never_cache
def admin_login(request):
    user = request.user
    if user.is_authenticated and not (user.is_active and user.is_staff):
        return render(request, "access/admin_refused.html", status=403)
    # The query string as it came (as Django's RedirectView passes it on): `next` stays readable.
    query = request.META.get("QUERY_STRING", "")
    return redirect(reverse("account_login") + (f"?{query}" if query else ""))


